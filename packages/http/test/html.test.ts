import { describe, expect, it } from "vitest"
import { attributes, html, Html, htmlResponse } from "../src/html.js"

const HOSTILE = `<script>alert(1)</script>"><img src=x onerror=alert(1)>' onmouseover='x\`</textarea>&amp;{{7*7}}`
const ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(1)&gt;&#39; onmouseover=&#39;x&#96;&lt;/textarea&gt;&amp;amp;{{7*7}}"

describe("the html tag", () => {
  it("escapes & < > \" ' and ` in text and in attribute values alike", () => {
    expect(html`<p>${HOSTILE}</p>`.toString()).toBe(`<p>${ESCAPED}</p>`)
    expect(html`<input value="${HOSTILE}" title='${HOSTILE}'>`.toString()).toBe(`<input value="${ESCAPED}" title='${ESCAPED}'>`)
    expect(html`<textarea>${HOSTILE}</textarea><title>${HOSTILE}</title>`.toString()).toBe(`<textarea>${ESCAPED}</textarea><title>${ESCAPED}</title>`)
  })

  it("keeps Html as it is, renders arrays item by item and nothing for null, undefined and false", () => {
    const item = (text: string) => html`<li>${text}</li>`
    expect(html`<ul>${["a", "<b>"].map(item)}</ul>`.toString()).toBe("<ul><li>a</li><li>&lt;b&gt;</li></ul>")
    expect(html`<p>${null}${undefined}${false}${0}${""}</p>`.toString()).toBe("<p>0</p>")
    expect(html`<p>${[[html`<b>x</b>`, "<i>"], null]}</p>`.toString()).toBe("<p><b>x</b>&lt;i&gt;</p>")
  })

  it("escapes Html inside an attribute value: markup is only text there", () => {
    expect(html`<a title="${html`<b class="x">`}">`.toString()).toBe(`<a title="&lt;b class=&quot;x&quot;&gt;">`)
  })

  it("keeps only http(s) and same-origin URLs at the start of href, src, action and formaction", () => {
    for (const unsafe of ["javascript:alert(1)", " JavaScript:alert(1)", "java\tscript:alert(1)", "\u0001javascript:alert(1)", "data:text/html,<script>", "vbscript:x"]) {
      expect(html`<a href="${unsafe}">x</a>`.toString()).toBe(`<a href="about:invalid">x</a>`)
      expect(html`<form action="${unsafe}"></form>`.toString()).toBe(`<form action="about:invalid"></form>`)
      expect(attributes({ src: unsafe }).toString()).toBe(` src="about:invalid"`)
    }
    for (const safe of ["/panel/r/products", "?cursor=a&b=c", "#content", "https://example.com/x?a=1", "http://127.0.0.1:1/cb", "relative/path"]) {
      expect(html`<a href="${safe}">x</a>`.toString()).toBe(`<a href="${safe.replace(/&/g, "&amp;")}">x</a>`)
    }
    // After a static start the scheme is already fixed: the rest is escaped text.
    expect(html`<a href="/panel/r/${"javascript:x"}">x</a>`.toString()).toBe(`<a href="/panel/r/javascript:x">x</a>`)
  })

  it("writes attributes from a record: true as the name alone, false and nothing left out, text escaped", () => {
    expect(attributes({ selected: true, checked: false, id: undefined, "aria-describedby": "a b", title: HOSTILE }).toString())
      .toBe(` selected aria-describedby="a b" title="${ESCAPED}"`)
    expect(html`<option value="x"${attributes({ selected: true })}>x</option>`.toString()).toBe(`<option value="x" selected>x</option>`)
    expect(() => attributes({ onclick: "x" })).toThrow(/onclick/)
    expect(() => attributes({ style: "x" })).toThrow(/style/)
    expect(() => attributes({ "a b": "x" })).toThrow()
  })

  it("refuses text in an attribute list, where it could add an attribute", () => {
    expect(() => html`<input ${"onfocus=alert(1) autofocus"}>`).toThrow(/attribute list/)
    expect(html`<input ${null}${false}${html` hidden`}>`.toString()).toBe("<input  hidden>")
  })

  it("refuses a value where escaping is not enough", () => {
    expect(() => html`<script>${"x"}</script>`).toThrow(/<script>/)
    expect(() => html`<style>${"x"}</style>`).toThrow(/<style>/)
    expect(() => html`<!-- ${"x"} -->`).toThrow(/comment/)
    expect(() => html`<a onclick="${"x"}">`).toThrow(/onclick/)
    expect(() => html`<a ONMOUSEOVER='go(${"x"})'>`).toThrow(/onmouseover/)
    expect(() => html`<p style="color: ${"x"}">`).toThrow(/style/)
    expect(() => html`<input value=${"x"}>`).toThrow(/unquoted/)
    expect(() => html`<input value = ${"x"}>`).toThrow(/unquoted/)
    expect(() => html`<p class="${"x"}`).toThrow(/ends inside/)
    // Text after a closed script or comment is text again.
    expect(html`<script src="/a.js"></script><!-- c --><p>${"<"}</p>`.toString()).toBe(`<script src="/a.js"></script><!-- c --><p>&lt;</p>`)
  })

  it("leaves out a line break in the template's own text and the indentation after it", () => {
    const name = "a\nb"
    expect(html`
      <ul>
        <li>${name}</li>
      </ul>`.toString()).toBe("<ul><li>a\nb</li></ul>")
  })

  it("is the only way to make Html and the only body of an HTML answer", () => {
    // @ts-expect-error the token that makes Html is not exported
    expect(() => new Html("<script>", Symbol("erp/html"))).toThrow()
    // @ts-expect-error a string is not Html
    const page: Html = "<p>hi</p>"
    expect(page).toBe("<p>hi</p>")
    // @ts-expect-error an answer's body is Html, never a string
    expect(() => htmlResponse("<p>hi</p>", { headers: {} })).toBeDefined()
    expect(htmlResponse(html`<p>hi</p>`, { headers: {} }).headers["content-type"]).toBe("text/html; charset=utf-8")
  })
})
