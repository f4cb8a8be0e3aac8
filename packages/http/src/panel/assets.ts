/**
 * The panel's only two assets, part of our build and served by the host itself (no CDN:
 * hosts may run offline). Served as files, not inline, so the CSP can forbid inline code.
 */
export const PANEL_CSS = `
:root { --bg: #f4f5f8; --card: #fff; --ink: #1b2130; --muted: #566074; --line: #dde1ea; --brand: #1f4fc9; --brand-ink: #fff;
  --ok: #176a3a; --ok-bg: #e3f4ea; --warn: #7a4b00; --warn-bg: #fff1d6; --bad: #8a1c1c; --bad-bg: #fde8e8; --focus: #ffbf47; }
* { box-sizing: border-box; }
html { -webkit-text-size-adjust: 100%; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background: var(--bg); color: var(--ink); }
a { color: var(--brand); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, summary:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: var(--card); padding: .5rem 1rem; z-index: 10; }
.skip:focus { left: .5rem; top: .5rem; }
.top { display: flex; align-items: center; gap: 1rem; padding: .6rem 1.2rem; background: #17213a; color: #fff; flex-wrap: wrap; }
.top a { color: #fff; }
.brand { font-weight: 700; font-size: 1.05rem; text-decoration: none; letter-spacing: .01em; }
.brand span { opacity: .7; font-weight: 500; }
.top .who { margin-left: auto; display: flex; align-items: center; gap: .75rem; flex-wrap: wrap; font-size: .9rem; min-width: 0; }
.top .who span { overflow-wrap: anywhere; min-width: 0; }
td, dd, h1 { overflow-wrap: anywhere; }
.top form { margin: 0; display: flex; gap: .4rem; align-items: center; }
.top select { padding: .3rem; border-radius: .35rem; border: 0; max-width: 12rem; }
.top button { background: #2c3a5e; color: #fff; border: 1px solid #4a5a84; padding: .3rem .7rem; border-radius: .35rem; cursor: pointer; font: inherit; }
.shell { display: grid; grid-template-columns: 15rem minmax(0, 1fr); min-height: calc(100vh - 3rem); }
nav.side { background: var(--card); border-right: 1px solid var(--line); padding: 1rem .6rem; }
nav.side h2 { font-size: .75rem; text-transform: uppercase; letter-spacing: .06em; color: var(--muted); margin: 1.1rem .6rem .3rem; }
nav.side ul { list-style: none; margin: 0; padding: 0; }
nav.side a { display: block; padding: .4rem .6rem; border-radius: .4rem; text-decoration: none; color: var(--ink); }
nav.side a:hover { background: var(--bg); }
nav.side a[aria-current="page"] { background: #e6edff; color: var(--brand); font-weight: 600; }
main { padding: 1.5rem 2rem 3rem; max-width: 72rem; width: 100%; }
h1 { font-size: 1.45rem; margin: 0 0 1rem; }
h2 { font-size: 1.1rem; margin: 0 0 .6rem; }
.bar { display: flex; align-items: center; gap: .75rem; flex-wrap: wrap; margin-bottom: 1rem; }
.bar h1 { margin: 0; margin-right: auto; }
.chart { margin: 0 0 .8rem; min-width: 0; }
.chart svg { display: block; width: 100%; height: auto; }
.chart .grid-line { fill: var(--line); }
.chart .axis { fill: var(--muted); font-size: 17px; }
.chart .axis.end { text-anchor: end; } .chart .axis.middle { text-anchor: middle; }
.chart .in, .key.in { fill: #2f855a; background: #2f855a; }
.chart .out, .key.out { fill: #c0392b; background: #c0392b; }
.chart .balance { fill: none; stroke: #1f4fc9; stroke-width: 2; }
.chart .balance-point { fill: #1f4fc9; }
.key.balance { background: #1f4fc9; }
.series-0 { fill: #1f4fc9; background: #1f4fc9; } .series-1 { fill: #2f855a; background: #2f855a; } .series-2 { fill: #b7791f; background: #b7791f; }
.series-3 { fill: #805ad5; background: #805ad5; } .series-4 { fill: #718096; background: #718096; }
.legend { font-size: .8rem; color: var(--muted); display: flex; flex-wrap: wrap; gap: .3rem .6rem; align-items: center; }
.key { display: inline-block; width: .8rem; height: .8rem; border-radius: .15rem; }
table.report td, table.report th { white-space: nowrap; }
.report-filters { align-items: flex-start; }
.report-filters .hint { color: var(--muted); font-size: .75rem; margin: .25rem 0 0; }
.report-filters div.submit { flex: 1 1 100%; }
.reports { list-style: none; padding: 0; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: .6rem; padding: 1.1rem 1.2rem; margin-bottom: 1.2rem; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(18rem, 1fr)); gap: 1.2rem; }
.card > :first-child { margin-top: 0; }
.card > :last-child { margin-bottom: 0; }
.grid { margin-bottom: 1.2rem; }
.grid .card { margin: 0; }
h3 { font-size: 1rem; margin: 0 0 .3rem; }
.counts { display: grid; grid-template-columns: repeat(auto-fill, minmax(9.5rem, 1fr)); gap: .6rem; list-style: none; padding: 0; margin: 0; }
.counts li a { display: block; border: 1px solid var(--line); border-radius: .5rem; padding: .55rem .7rem; text-decoration: none; color: var(--ink); }
.counts strong { display: block; font-size: 1.3rem; }
.counts span { color: var(--muted); font-size: .85rem; }
.table-wrap { overflow-x: auto; }
td.num { white-space: nowrap; }
.suggestions { margin: 0; padding-left: 1.2rem; }
.suggestions li { margin: 0 0 .6rem; }
.suggestions .score { font-weight: 600; margin-right: .4rem; }
.suggestions .document, .suggestions .reasons { display: block; }
.suggestions form { margin-top: .3rem; }
table { width: 100%; border-collapse: collapse; background: var(--card); }
th, td { text-align: left; padding: .55rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); font-weight: 600; }
td.actions { white-space: nowrap; text-align: right; }
td.actions form { display: inline; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: .88em; }
.badge { display: inline-block; padding: .1rem .5rem; border-radius: 1rem; font-size: .8rem; font-weight: 600; }
.badge.active { background: var(--ok-bg); color: var(--ok); }
.badge.expired { background: var(--warn-bg); color: var(--warn); }
.badge.revoked, .badge.failing { background: var(--bad-bg); color: var(--bad); }
.muted { color: var(--muted); }
.small { font-size: .85rem; }
.flash { padding: .7rem 1rem; border-radius: .5rem; margin-bottom: 1rem; background: var(--ok-bg); color: var(--ok); }
.error, .alert { padding: .7rem 1rem; border-radius: .5rem; margin-bottom: 1rem; background: var(--bad-bg); color: var(--bad); }
.alert { background: var(--warn-bg); color: var(--warn); }
.field-error { color: var(--bad); font-size: .88rem; margin: .25rem 0 0; }
label { display: block; font-weight: 600; margin: 1rem 0 .3rem; }
.hint { color: var(--muted); font-size: .85rem; margin: .25rem 0 0; }
input[type=text], input[type=email], input[type=password], input[type=date], input[type=number], input[type=search], select, textarea {
  width: 100%; max-width: 34rem; padding: .5rem .6rem; font: inherit; border: 1px solid #a9b1c2; border-radius: .4rem; background: #fff; color: var(--ink); }
textarea { min-height: 6rem; max-width: 100%; }
input[aria-invalid=true], select[aria-invalid=true], textarea[aria-invalid=true] { border-color: var(--bad); border-width: 2px; }
.btn, button.primary, button.secondary, button.danger { display: inline-block; padding: .5rem 1rem; font: inherit; font-weight: 600; border-radius: .4rem;
  border: 1px solid transparent; cursor: pointer; text-decoration: none; }
.btn.primary, button.primary { background: var(--brand); color: var(--brand-ink); }
.btn.secondary, button.secondary { background: #e7eaf1; color: var(--ink); border-color: #cfd4df; }
button.danger, .btn.danger { background: #b42318; color: #fff; }
button.link { background: none; border: 0; color: var(--brand); cursor: pointer; font: inherit; padding: 0; text-decoration: underline; }
.form-actions { display: flex; gap: .6rem; margin-top: 1.4rem; flex-wrap: wrap; }
fieldset { border: 1px solid var(--line); border-radius: .5rem; margin: 1rem 0 0; padding: .6rem .8rem; min-width: 0; }
legend { font-weight: 600; padding: 0 .3rem; }
.matrix { border: 0; }
.matrix td, .matrix th { padding: .3rem .5rem; text-align: center; }
.matrix td:first-child, .matrix th:first-child { text-align: left; }
.matrix input { width: 1.1rem; height: 1.1rem; }
.token { display: flex; gap: .5rem; align-items: stretch; flex-wrap: wrap; }
.token output { flex: 1 1 20rem; padding: .6rem; background: #0f1524; color: #e9f0ff; border-radius: .4rem; overflow-wrap: anywhere; }
.filters { display: flex; gap: .8rem; align-items: flex-end; flex-wrap: wrap; }
.filters label { margin: 0 0 .2rem; font-size: .85rem; }
.filters div { flex: 1 1 12rem; }
.pager { display: flex; gap: .8rem; margin-top: 1rem; }
dl.record { display: grid; grid-template-columns: minmax(8rem, 14rem) 1fr; gap: .35rem 1rem; margin: 0; }
dl.record dt { color: var(--muted); font-weight: 600; }
dl.record dd { margin: 0; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f3f5f9; padding: .6rem; border-radius: .4rem; margin: 0; }
.signin { max-width: 26rem; margin: 4rem auto; width: auto; }
@media (max-width: 760px) {
  .shell { display: block; }
  nav.side { border-right: 0; border-bottom: 1px solid var(--line); padding: .4rem .6rem; overflow-x: auto; }
  nav.side h2 { display: none; }
  nav.side ul { display: flex; gap: .2rem; white-space: nowrap; }
  nav.side .group { display: contents; }
  main { padding: 1rem .9rem 2rem; }
  .top { padding: .6rem .9rem; }
  .top .who { margin-left: 0; width: 100%; }
  dl.record { grid-template-columns: 1fr; }
  dl.record dt { margin-top: .4rem; }
  .signin { margin: 1.5rem auto; }
  .matrix td, .matrix th { padding: .25rem .3rem; }
  .matrix th { font-size: .7rem; letter-spacing: 0; }
  fieldset { padding: .5rem .4rem; }
  table.stack thead { display: none; }
  table.stack tr { display: block; border-bottom: 1px solid var(--line); padding: .4rem 0; }
  table.stack td { display: block; border: 0; padding: .15rem .6rem; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-size: .8rem; font-weight: 600; }
  table.stack td.actions { text-align: left; }
}
`

/**
 * Progressive enhancement only (every screen works without it): the copy button of a
 * shown-once secret, and times rewritten into the browser's own time zone. Confirmations
 * are pages of their own, not `confirm()`, so they work without script and by keyboard.
 */
export const PANEL_JS = `
(function () {
  var lang = document.documentElement.lang || undefined;
  var format = new Intl.DateTimeFormat(lang, { dateStyle: "medium", timeStyle: "short" });
  document.querySelectorAll("time[data-local]").forEach(function (node) {
    var date = new Date(node.getAttribute("datetime"));
    if (!isNaN(date.getTime())) node.textContent = format.format(date);
  });
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) return;
      navigator.clipboard.writeText(source.textContent.trim()).then(function () {
        button.textContent = button.getAttribute("data-copied") || "Copied";
      });
    });
  });
})();
`
