import { HttpServerResponse } from "effect/http"

/**
 * Every HTML page the host serves is built with one tag, `html`: a value put into a template is
 * escaped unless it is itself `Html`, so what people typed (a record's name, a client's name, a
 * value shown again on a refused form) can only ever be text. `Html` is made here alone: a plain
 * string cannot reach a page, since `htmlResponse` takes `Html` only.
 *
 * The tag also reads where each value lands, once per template, and refuses the places where
 * escaping is not enough: inside `<script>`, `<style>` or a comment, in an event handler or
 * `style` attribute, in an unquoted attribute value. Text in the attribute list itself (where it
 * could add an attribute) is refused too: attributes are written in the template or by
 * `attributes`. A value starting an `href`, `src`, `action` or `formaction` keeps only http(s)
 * and same-origin URLs; any other scheme (`javascript:`) becomes an inert `about:invalid`.
 */

const TRUSTED: unique symbol = Symbol("erp/html")

/** Markup safe to send: made by `html` and `attributes` only. */
export class Html {
  readonly #markup: string
  constructor(markup: string, trusted: typeof TRUSTED) {
    if (trusted !== TRUSTED) throw new TypeError("Html is made by the html tag only")
    this.#markup = markup
  }
  toString(): string {
    return this.#markup
  }
}

/** What a template takes: nothing renders for null, undefined and false; arrays render each item. */
export type Interpolation = Html | string | number | null | undefined | false | ReadonlyArray<Interpolation>

const ESCAPES: Readonly<Record<string, string>> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" }
const escape = (text: string) => text.replace(/[&<>"'`]/g, (char) => ESCAPES[char]!)

/** Where a value lands: element text, a quoted attribute value, the start of a URL attribute's value, or the attribute list. */
type Hole = "text" | "value" | "url" | "tag"

const URL_ATTRIBUTES = new Set(["href", "src", "action", "formaction"])
/** Attributes whose value is code, not text: escaping does not make a value safe there. */
const CODE_ATTRIBUTE = /^(?:on|style$|srcdoc$)/
/** Elements whose content is not parsed for entities: escaped text would be wrong there, raw text unsafe. */
const RAW_TEXT_ELEMENTS = new Set(["script", "style"])

interface Template {
  readonly parts: ReadonlyArray<string>
  readonly holes: ReadonlyArray<Hole>
}

const templates = new WeakMap<TemplateStringsArray, Template>()

/**
 * Reads a template's static text once and names the place of each value; a value where none
 * may go is a programming error. A line break in the template's own text, with the indentation
 * after it, is left out: templates are written over several lines, between tags, and the page
 * stays as compact as one line.
 */
const templateOf = (strings: TemplateStringsArray): Template => {
  const known = templates.get(strings)
  if (known) return known
  const parts = strings.map((part) => part.replace(/\n[ \t]*/g, ""))
  let state: "text" | "tag" | "value" | "comment" | "raw" = "text"
  let element = ""
  let attribute = ""
  let naming = false
  let afterEquals = false
  let quote = ""
  let valueStart = false
  const found: Array<Hole> = []
  const refuse = (problem: string) => {
    throw new TypeError(`html: ${problem} (template: ${parts.join("${…}").slice(0, 200)})`)
  }
  parts.forEach((part, index) => {
    for (let at = 0; at < part.length; at++) {
      const char = part[at]
      if (state === "text") {
        if (part.startsWith("<!--", at)) {
          state = "comment"
          at += 3
        } else if (char === "<" && /[a-z]/i.test(part[at + 1] ?? "")) {
          element = /^[a-z][a-z0-9-]*/i.exec(part.slice(at + 1))![0].toLowerCase()
          at += element.length
          state = "tag"
          naming = false
          afterEquals = false
        }
      } else if (state === "comment") {
        if (part.startsWith("-->", at)) {
          state = "text"
          at += 2
        }
      } else if (state === "raw") {
        if (part.slice(at, at + element.length + 2).toLowerCase() === `</${element}`) state = "text"
      } else if (state === "value") {
        if (char === quote) state = "tag"
        else valueStart = false
      } else if (char === ">") {
        state = RAW_TEXT_ELEMENTS.has(element) ? "raw" : "text"
      } else if (char === '"' || char === "'") {
        state = "value"
        quote = char
        valueStart = true
        afterEquals = false
        naming = false
      } else if (char === "=") {
        afterEquals = true
        naming = false
      } else if (/[\s/]/.test(char)) {
        naming = false
      } else {
        if (!naming) attribute = ""
        attribute += char.toLowerCase()
        naming = true
        afterEquals = false
      }
    }
    if (index === parts.length - 1) {
      if (state !== "text") refuse("the template ends inside a tag, comment or script")
      return
    }
    if (state === "comment") refuse("a value inside a comment")
    if (state === "raw") refuse(`a value inside <${element}>`)
    if (state === "tag" && afterEquals) refuse("a value in an unquoted attribute value")
    if (state === "value" && CODE_ATTRIBUTE.test(attribute)) refuse(`a value in the ${attribute} attribute`)
    found.push(state === "text" ? "text" : state === "tag" ? "tag" : URL_ATTRIBUTES.has(attribute) && valueStart ? "url" : "value")
  })
  const template = { parts, holes: found }
  templates.set(strings, template)
  return template
}

/** A URL the page may link to: a relative reference (same origin) or http(s). */
const safeUrl = (text: string): string => {
  try {
    const { protocol } = new URL(text, "http://relative.invalid/")
    return protocol === "http:" || protocol === "https:" ? text : "about:invalid"
  } catch {
    return "about:invalid"
  }
}

const render = (value: Interpolation, hole: Hole): string => {
  if (value === null || value === undefined || value === false) return ""
  if (Array.isArray(value)) return value.map((item: Interpolation) => render(item, hole)).join("")
  if (value instanceof Html) {
    // Markup inside an attribute value is only text there.
    return hole === "text" || hole === "tag" ? value.toString() : escape(hole === "url" ? safeUrl(value.toString()) : value.toString())
  }
  if (hole === "tag") throw new TypeError(`html: text in an attribute list (${String(value).slice(0, 40)}): write attributes with attributes()`)
  const text = String(value)
  return escape(hole === "url" ? safeUrl(text) : text)
}

/** The tag: `html\`<p class="x">${name}</p>\`` escapes `name`. */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<Interpolation>): Html => {
  const { parts, holes } = templateOf(strings)
  let markup = parts[0]
  for (let index = 0; index < values.length; index++) markup += render(values[index], holes[index]) + parts[index + 1]
  return new Html(markup, TRUSTED)
}

const ATTRIBUTE_NAME = /^[a-z][a-z0-9-]*$/

/**
 * Attributes from a record, each with a leading space: `true` writes the name alone, false,
 * null and undefined leave it out, text is escaped (and checked as a URL in a URL attribute).
 */
export const attributes = (values: Readonly<Record<string, string | number | boolean | null | undefined>>): Html => {
  let markup = ""
  for (const [name, value] of Object.entries(values)) {
    if (!ATTRIBUTE_NAME.test(name) || CODE_ATTRIBUTE.test(name)) throw new TypeError(`html: attribute ${name} is not allowed`)
    if (value === null || value === undefined || value === false) continue
    markup += value === true ? ` ${name}` : ` ${name}="${escape(URL_ATTRIBUTES.has(name) ? safeUrl(String(value)) : String(value))}"`
  }
  return new Html(markup, TRUSTED)
}

/** An HTML answer: the page is `Html`, so no string reaches it unescaped. */
export const htmlResponse = (page: Html, options: { readonly status?: number; readonly headers: Readonly<Record<string, string>> }) =>
  HttpServerResponse.text(page.toString(), { status: options.status ?? 200, contentType: "text/html; charset=utf-8", headers: options.headers })
