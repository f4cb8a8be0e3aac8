/**
 * The lines of a return file. Banks write CNAB files in Windows-1252 (or Latin-1, which
 * Windows-1252 reads the same for every printable character), some in UTF-8; lines end
 * in CRLF or LF, and the last line often ends with one too.
 */

/** Far above any bank's daily return, well below trouble. */
export const MAX_LINES = 200_000
/** 400 characters of two UTF-8 bytes each, and CRLF. */
const MAX_BYTES_PER_LINE = 802

export type CnabLines = { readonly ok: true; readonly lines: ReadonlyArray<string> } | { readonly ok: false; readonly message: string }

const tooLarge = { ok: false, message: `the file is too large: a CNAB return file is read up to ${MAX_LINES} lines` } as const

/** The text of the file: UTF-8 when it is valid UTF-8, else Windows-1252. */
const decode = (content: Uint8Array): string => {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(content)
  } catch {
    return new TextDecoder("windows-1252").decode(content)
  }
}

/** The file's lines without their line ends and without the empty lines after the last record. */
export const cnabLines = (content: Uint8Array | string): CnabLines => {
  if (content.length > MAX_LINES * MAX_BYTES_PER_LINE) return tooLarge
  const text = typeof content === "string" ? content.replace(/^\uFEFF/, "") : decode(content)
  const lines = text.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line))
  while (lines.length > 0 && lines[lines.length - 1] === "") lines.pop()
  if (lines.length === 0) return { ok: false, message: "the file is empty" }
  if (lines.length > MAX_LINES) return tooLarge
  return { ok: true, lines }
}
