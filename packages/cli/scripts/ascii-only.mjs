import { transform } from "esbuild"

/**
 * The bundle's text with every character past ASCII written as an escape, when they are all in
 * comments; else the text as it was. esbuild escapes such characters in strings already but keeps
 * the comments it carries over (some of ours and our dependencies' have dashes and accents). A
 * file of ASCII alone is read by bin/erp.js as Latin-1, far faster than decoding it as UTF-8 on
 * every start. Whether only comments changed is checked by comparing the two
 * texts with their comments dropped: a character in a raw template would differ there.
 */
export const asciiOnly = async (text) => {
  const ascii = text.replace(/[^\x00-\x7f]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
  if (ascii === text) return text
  const withoutComments = async (source) => (await transform(source, { minifyWhitespace: true, legalComments: "none", loader: "js" })).code
  return (await withoutComments(ascii)) === (await withoutComments(text)) ? ascii : text
}
