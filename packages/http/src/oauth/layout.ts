import { html, type Html } from "../html.js"

/** A whole page: inline style only, no scripts (the pages' CSP forbids them). */
export const page = (title: string, body: Html): Html => html`
  <!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title><style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; color: #1d2330; margin: 0; }
  main { max-width: 26rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: .75rem; box-shadow: 0 1px 4px #0002; }
  h1 { font-size: 1.3rem; margin-top: 0; }
  label { display: block; margin: .9rem 0 .3rem; font-weight: 600; }
  input, select { width: 100%; padding: .55rem; font-size: 1rem; box-sizing: border-box; border: 1px solid #b8bfcc; border-radius: .4rem; }
  button { margin-top: 1.2rem; padding: .6rem 1.2rem; font-size: 1rem; border-radius: .4rem; border: 0; cursor: pointer; }
  .primary { background: #2456d6; color: #fff; }
  .secondary { background: #e4e7ee; color: #1d2330; margin-left: .5rem; }
  .error { background: #fde8e8; color: #8a1c1c; padding: .7rem; border-radius: .4rem; }
  ul { padding-left: 1.2rem; } li { margin: .25rem 0; }
  .muted { color: #5b6475; font-size: .9rem; }
  </style></head><body><main>${body}</main></body></html>`

export const hiddenFields = (fields: Readonly<Record<string, string | undefined>>): ReadonlyArray<Html> =>
  Object.entries(fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)

/** Headers of every authorization page: no caching, no framing, no scripts, forms post only here. */
export const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff"
} as const
