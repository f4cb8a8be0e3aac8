/**
 * A small OFX reader for bank and credit-card statements: OFX 1.x (SGML, leaf
 * elements without closing tags, headers as `KEY:VALUE` lines, often Windows-1252
 * as Brazilian banks export it) and OFX 2.x (XML with `<?xml?>` and `<?OFX?>`
 * headers, as US banks export it). One linear pass, no regular expression that can
 * backtrack, no recursion: a hostile file costs time proportional to its size.
 */

/** An element of the document: a value (leaf) or children (aggregate). */
export interface OfxElement {
  readonly name: string
  value: string | undefined
  readonly children: Array<OfxElement>
}

export class OfxError extends Error {}

/** At most this many elements and this much nesting: far above any real statement, well below trouble. */
const MAX_ELEMENTS = 500_000
const MAX_DEPTH = 32

/**
 * Aggregates of the statement messages. Any other element without a value is an
 * aggregate only when the file closes it somewhere (SGML leaves are never closed).
 */
const AGGREGATES = new Set([
  "OFX", "SIGNONMSGSRSV1", "SONRS", "STATUS", "FI", "BANKMSGSRSV1", "STMTTRNRS", "STMTRS", "BANKACCTFROM", "BANKACCTTO",
  "CCACCTFROM", "CCACCTTO", "BANKTRANLIST", "STMTTRN", "PAYEE", "CURRENCY", "ORIGCURRENCY", "LEDGERBAL", "AVAILBAL", "BALLIST",
  "BAL", "CREDITCARDMSGSRSV1", "CCSTMTTRNRS", "CCSTMTRS", "IMAGEDATA", "INV401K"
])

/** The text of the file: UTF-8 when it is valid UTF-8, else Windows-1252 (which Latin-1 files also read right). */
export const decodeOfx = (content: Uint8Array | string): string => {
  if (typeof content === "string") return content.replace(/^\uFEFF/, "")
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(content)
  } catch {
    return new TextDecoder("windows-1252").decode(content)
  }
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: "\u00a0" }

/** `&amp;`, `&lt;`, `&#233;`, `&#xE9;`; anything else (a bare `&` in SGML) stays as written. */
const decodeEntities = (text: string): string => {
  if (!text.includes("&")) return text
  let out = ""
  let index = 0
  while (index < text.length) {
    const amp = text.indexOf("&", index)
    if (amp < 0) break
    out += text.slice(index, amp)
    const semi = text.indexOf(";", amp)
    const name = semi > amp && semi - amp <= 10 ? text.slice(amp + 1, semi) : ""
    let decoded: string | undefined
    if (name.startsWith("#x") || name.startsWith("#X")) decoded = codePoint(Number.parseInt(name.slice(2), 16))
    else if (name.startsWith("#")) decoded = codePoint(Number.parseInt(name.slice(1), 10))
    else decoded = ENTITIES[name.toLowerCase()]
    if (decoded === undefined) {
      out += "&"
      index = amp + 1
    } else {
      out += decoded
      index = semi + 1
    }
  }
  return out + text.slice(index)
}

const codePoint = (value: number): string | undefined =>
  Number.isInteger(value) && value > 0 && value <= 0x10ffff && !(value >= 0xd800 && value <= 0xdfff) ? String.fromCodePoint(value) : undefined

const isNameChar = (code: number) =>
  (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 46 || code === 95 || code === 45

type Token =
  | { readonly kind: "open"; readonly name: string }
  | { readonly kind: "close"; readonly name: string }
  | { readonly kind: "text"; readonly text: string }

/**
 * The text between two tags: character data with its entities decoded, and CDATA
 * sections (`<![CDATA[…]]>`, which OFX 2.x exporters use for names and memos) kept
 * verbatim. The whitespace around the value is dropped, the whitespace inside a
 * CDATA section is part of it.
 */
class TextRun {
  private readonly pieces: Array<{ readonly cdata: boolean; readonly text: string }> = []

  add(text: string, cdata: boolean) {
    if (text) this.pieces.push({ cdata, text })
  }

  /** The run's text token, if it holds anything but whitespace; the run starts empty again. */
  flush(tokens: Array<Token>) {
    const last = this.pieces.length - 1
    const text = this.pieces.map((piece, at) => {
      if (piece.cdata) return piece.text
      const trimmed = at === 0 && at === last ? piece.text.trim() : at === 0 ? piece.text.trimStart() : at === last ? piece.text.trimEnd() : piece.text
      return decodeEntities(trimmed)
    }).join("")
    this.pieces.length = 0
    if (text) tokens.push({ kind: "text", text })
  }
}

const CDATA_OPEN = "<![CDATA["
const CDATA_CLOSE = "]]>"

/** Tags and the text between them, from `<OFX>` on; processing instructions, comments and declarations are skipped. */
const tokenize = (body: string): Array<Token> => {
  const tokens: Array<Token> = []
  const run = new TextRun()
  let index = 0
  while (index < body.length) {
    const lt = body.indexOf("<", index)
    const end = lt < 0 ? body.length : lt
    run.add(body.slice(index, end), false)
    if (lt < 0) break
    if (body.startsWith(CDATA_OPEN, lt)) {
      // The section ends at the first `]]>`: a `]` or `]]` before it is content.
      const close = body.indexOf(CDATA_CLOSE, lt + CDATA_OPEN.length)
      if (close < 0) throw new OfxError(`unclosed CDATA section at character ${lt}`)
      run.add(body.slice(lt + CDATA_OPEN.length, close), true)
      index = close + CDATA_CLOSE.length
      continue
    }
    run.flush(tokens)
    const next = body.charCodeAt(lt + 1)
    if (next === 33 /* ! */ || next === 63 /* ? */) {
      const close = body.startsWith("<!--", lt) ? body.indexOf("-->", lt + 4) : body.indexOf(">", lt + 1)
      if (close < 0) break
      index = close + (body.startsWith("<!--", lt) ? 3 : 1)
      continue
    }
    const closing = next === 47 /* / */
    let cursor = lt + (closing ? 2 : 1)
    const start = cursor
    while (cursor < body.length && isNameChar(body.charCodeAt(cursor))) cursor++
    const name = body.slice(start, cursor).toUpperCase()
    const gt = body.indexOf(">", cursor)
    if (!name || gt < 0) throw new OfxError(`malformed tag at character ${lt}`)
    // Attributes are not part of OFX; a self-closing `<TAG/>` is an empty element.
    const selfClosing = body.charCodeAt(gt - 1) === 47
    tokens.push({ kind: closing ? "close" : "open", name })
    if (selfClosing && !closing) tokens.push({ kind: "close", name })
    index = gt + 1
  }
  run.flush(tokens)
  return tokens
}

/** The headers of either version: `KEY:VALUE` lines (1.x) or the attributes of `<?OFX ...?>` (2.x). */
const readHeaders = (head: string): Record<string, string> => {
  const headers: Record<string, string> = {}
  const pi = head.indexOf("<?OFX")
  if (pi >= 0) {
    const end = head.indexOf("?>", pi)
    const inside = head.slice(pi + 5, end < 0 ? head.length : end)
    for (const pair of inside.split(/\s+/)) {
      const eq = pair.indexOf("=")
      if (eq > 0) headers[pair.slice(0, eq).toUpperCase()] = pair.slice(eq + 1).replace(/^["']|["']$/g, "")
    }
    return headers
  }
  for (const line of head.split(/\r?\n|\r/)) {
    const colon = line.indexOf(":")
    if (colon > 0) headers[line.slice(0, colon).trim().toUpperCase()] = line.slice(colon + 1).trim()
  }
  return headers
}

export interface OfxDocument {
  readonly headers: Readonly<Record<string, string>>
  readonly root: OfxElement
}

/**
 * Reads a document into a tree. SGML leaves close themselves when the next tag
 * comes; a closing tag closes everything opened after its element; a stray one is
 * ignored, and elements left open at the end are closed.
 */
export const parseOfx = (content: Uint8Array | string): OfxDocument => {
  const text = decodeOfx(content)
  const start = text.search(/<OFX>/i)
  if (start < 0) throw new OfxError("no <OFX> element: this is not an OFX file")
  const headers = readHeaders(text.slice(0, start))
  const tokens = tokenize(text.slice(start))
  const closed = new Set(tokens.flatMap((token) => (token.kind === "close" ? [token.name] : [])))
  if (tokens.length > MAX_ELEMENTS * 3) throw new OfxError("the file has too many elements")
  const root: OfxElement = { name: "#document", value: undefined, children: [] }
  const stack: Array<OfxElement> = [root]
  let leafOpen = false
  for (const token of tokens) {
    const top = stack[stack.length - 1]
    if (token.kind === "text") {
      if (stack.length > 1 && top.children.length === 0) {
        top.value = top.value === undefined ? token.text : `${top.value} ${token.text}`
        leafOpen = true
      }
      continue
    }
    if (token.kind === "open") {
      // An SGML leaf with its value is done once another tag comes.
      if (leafOpen && stack.length > 1) stack.pop()
      leafOpen = false
      const element: OfxElement = { name: token.name, value: undefined, children: [] }
      stack[stack.length - 1].children.push(element)
      if (AGGREGATES.has(token.name) || closed.has(token.name)) {
        if (stack.length > MAX_DEPTH) throw new OfxError("the file nests too deeply")
        stack.push(element)
      } else {
        // An element never closed anywhere in the file is a leaf: it holds the text that follows, if any.
        stack.push(element)
        leafOpen = true
      }
      continue
    }
    leafOpen = false
    const at = stack.map((element) => element.name).lastIndexOf(token.name)
    if (at > 0) stack.length = at
  }
  if (root.children.length === 0) throw new OfxError("the file has no elements")
  return { headers, root }
}

/** The first child named `name` (with its value or children). */
export const child = (element: OfxElement | undefined, name: string): OfxElement | undefined =>
  element?.children.find((candidate) => candidate.name === name)

export const childValue = (element: OfxElement | undefined, name: string): string | undefined => {
  const value = child(element, name)?.value?.trim()
  return value === undefined || value === "" ? undefined : value
}

/** Every element named `name` anywhere below `element`, in document order (iteratively). */
export const descendants = (element: OfxElement, name: string): Array<OfxElement> => {
  const found: Array<OfxElement> = []
  const pending: Array<OfxElement> = [...element.children].reverse()
  while (pending.length > 0) {
    const next = pending.pop()!
    if (next.name === name) found.push(next)
    for (let index = next.children.length - 1; index >= 0; index--) pending.push(next.children[index])
  }
  return found
}
