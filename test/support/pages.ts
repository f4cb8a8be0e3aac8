import { type DefaultTreeAdapterTypes, parse } from "parse5"

/**
 * Hostile text for every field a person can set, and a check of a served page as a browser
 * parses it (parse5 follows the HTML standard's parser): what the text may not become is an
 * element, an attribute, a script or a link somewhere else.
 */

/** One string with a payload for each context: element text, double- and single-quoted attributes, URLs, textarea, templates. */
export const HOSTILE = `javascript:alert(1)//<script>alert(1)</script>"><img src=x onerror=alert(1)>' onmouseover='x</textarea>{{7*7}}\``

/** Shorter ones, for fields whose length or form refuses the whole: the same breakouts, fewer characters. */
export const HOSTILE_SHORT = [`"><svg onload=alert(1)>'`, `<b x='">`, `<i>`] as const

type Element = DefaultTreeAdapterTypes.Element
type Node = DefaultTreeAdapterTypes.Node

const isElement = (node: Node): node is Element => "tagName" in node

const elements = function* (node: Node): Generator<Element> {
  if (isElement(node)) yield node
  if ("childNodes" in node) for (const child of node.childNodes) yield* elements(child)
  if (isElement(node) && node.tagName === "template") yield* elements((node as DefaultTreeAdapterTypes.Template).content)
}

const textOf = (node: Node): string =>
  node.nodeName === "#text" ? (node as DefaultTreeAdapterTypes.TextNode).value : "childNodes" in node ? node.childNodes.map(textOf).join("") : ""

export const attributeOf = (element: Element, name: string) => element.attrs.find((attribute) => attribute.name === name)?.value

/** The elements our pages are made of: anything else on a page was made by what someone typed. */
const ELEMENTS = new Set([
  "html", "head", "body", "meta", "title", "link", "script", "style", "main", "header", "nav", "section", "div", "span", "a", "p", "h1", "h2", "h3",
  "ul", "li", "dl", "dt", "dd", "table", "thead", "tbody", "tr", "th", "td", "form", "label", "input", "select", "option", "textarea", "button",
  "fieldset", "legend", "strong", "code", "pre", "output", "time", "br", "ol",
  // The panel's charts, SVG drawn on the server.
  "svg", "rect", "text", "polyline"
])
const ATTRIBUTES = new Set([
  "lang", "charset", "name", "content", "rel", "href", "src", "defer", "class", "id", "role", "datetime", "method", "action", "novalidate", "type",
  "value", "for", "required", "autocomplete", "maxlength", "selected", "checked", "hidden", "tabindex", "inputmode", "spellcheck",
  "viewBox", "x", "y", "width", "height", "points"
])
const allowedAttribute = (element: string, name: string) =>
  (ATTRIBUTES.has(name) && (name !== "src" || element === "script")) || /^aria-[a-z]+$/.test(name) || /^data-(label|copy|copied|local)$/.test(name)

const URL_ATTRIBUTES = ["href", "src", "action", "formaction"]

export interface PageCheck {
  /** The page's own URL (links resolve against it, and must stay on its origin). */
  readonly url: string
  /** The one script a page may load (the panel's), or none. */
  readonly script?: string
}

/** What is wrong with a page: elements or attributes made from text, scripts, links off the site. */
export const pageProblems = (text: string, check: PageCheck): Array<string> => {
  const problems: Array<string> = []
  const origin = new URL(check.url).origin
  for (const element of elements(parse(text))) {
    const name = element.tagName
    if (!ELEMENTS.has(name)) problems.push(`element <${name}>`)
    for (const attribute of element.attrs) {
      if (!allowedAttribute(name, attribute.name)) problems.push(`attribute ${attribute.name} on <${name}>`)
    }
    if (name === "script" && (attributeOf(element, "src") !== check.script || check.script === undefined || textOf(element) !== "")) {
      problems.push(`script ${attributeOf(element, "src") ?? textOf(element).slice(0, 80)}`)
    }
    if (name === "style" && /[<>]|alert|onerror/.test(textOf(element))) problems.push(`style holding ${textOf(element).slice(0, 80)}`)
    for (const attribute of URL_ATTRIBUTES) {
      const value = attributeOf(element, attribute)
      if (value === undefined) continue
      if (name === "link" && value === "data:,") continue
      let target: URL | undefined
      try {
        target = new URL(value, check.url)
      } catch {
        target = undefined
      }
      if (target?.origin !== origin) problems.push(`${attribute}="${value.slice(0, 80)}" on <${name}> leaves ${origin}`)
    }
  }
  return problems
}

/** Every text and attribute value of a page as the browser reads it (entities decoded). */
export const pageStrings = (text: string): Array<string> => {
  const strings: Array<string> = []
  const walk = (node: Node) => {
    if (node.nodeName === "#text") strings.push((node as DefaultTreeAdapterTypes.TextNode).value)
    if (isElement(node)) for (const attribute of node.attrs) strings.push(attribute.value)
    if ("childNodes" in node) node.childNodes.forEach(walk)
  }
  walk(parse(text))
  return strings
}

/** Same-origin links of a page, resolved. */
export const linksOf = (text: string, url: string): Array<URL> =>
  [...elements(parse(text))]
    .filter((element) => element.tagName === "a" && attributeOf(element, "href") !== undefined)
    .map((element) => new URL(attributeOf(element, "href")!, url))
    .filter((link) => link.origin === new URL(url).origin)

export interface FormField {
  readonly name: string
  readonly kind: "hidden" | "text" | "checkbox" | "select" | "textarea"
  /** As served: the value, the text of a textarea, the selected (or first) option. */
  readonly value: string
  readonly options: ReadonlyArray<string>
}

export interface PageForm {
  readonly method: "GET" | "POST"
  readonly action: URL
  readonly fields: ReadonlyArray<FormField>
  /** Named submit buttons (`decision=allow`), each a way to send the form. */
  readonly buttons: ReadonlyArray<{ readonly name: string; readonly value: string }>
}

const fieldsOf = (form: Element): Array<FormField> => {
  const fields: Array<FormField> = []
  for (const element of elements(form)) {
    const name = attributeOf(element, "name")
    if (name === undefined) continue
    if (element.tagName === "input") {
      const type = attributeOf(element, "type") ?? "text"
      const kind = type === "hidden" ? "hidden" : type === "checkbox" ? "checkbox" : "text"
      fields.push({ name, kind, value: attributeOf(element, "value") ?? (kind === "checkbox" ? "on" : ""), options: [] })
    } else if (element.tagName === "textarea") {
      fields.push({ name, kind: "textarea", value: textOf(element), options: [] })
    } else if (element.tagName === "select") {
      const options = [...elements(element)].filter((option) => option.tagName === "option").map((option) => ({ value: attributeOf(option, "value") ?? textOf(option), selected: attributeOf(option, "selected") !== undefined }))
      fields.push({ name, kind: "select", value: (options.find((option) => option.selected) ?? options[0])?.value ?? "", options: options.map((option) => option.value) })
    }
  }
  return fields
}

/** The forms of a page, as a browser would send them. */
export const formsOf = (text: string, url: string): Array<PageForm> =>
  [...elements(parse(text))]
    .filter((element) => element.tagName === "form")
    .map((form) => ({
      method: (attributeOf(form, "method") ?? "get").toUpperCase() === "POST" ? "POST" as const : "GET" as const,
      action: new URL(attributeOf(form, "action") ?? url, url),
      fields: fieldsOf(form),
      buttons: [...elements(form)]
        .filter((element) => element.tagName === "button" && attributeOf(element, "name") !== undefined)
        .map((button) => ({ name: attributeOf(button, "name")!, value: attributeOf(button, "value") ?? "" }))
    }))

/** Names of the fields a refused form marks `aria-invalid`. */
export const invalidFieldsOf = (text: string): Array<string> =>
  [...elements(parse(text))].filter((element) => attributeOf(element, "aria-invalid") === "true").map((element) => attributeOf(element, "name") ?? "")
