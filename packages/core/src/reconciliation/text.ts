/**
 * What a bank statement line says, read for matching: its words without accents or case, and its
 * digit runs with the punctuation of formatted numbers (CNPJ 12.345.678/0001-90) taken out.
 */
export interface LineText {
  readonly words: ReadonlySet<string>
  /** The words in the order written: a name is read in its order, so "Santos Ribeiro" is not "Ribeiro Santos". */
  readonly sequence: ReadonlyArray<string>
  readonly digitRuns: ReadonlySet<string>
  /** Letters and digits only, upper case: where identifiers (a PIX txid, a reference code) are looked for. */
  readonly compact: string
}

/** Words that say nothing of who a party is: company forms and joining words. */
const STOP_WORDS = new Set(["ltda", "sa", "s/a", "me", "epp", "eireli", "mei", "cia", "inc", "llc", "corp", "co", "de", "da", "do", "das", "dos", "e", "the", "and", "of"])

const plain = (text: string) => text.normalize("NFD").replace(/\p{M}/gu, "").toLowerCase()

/** The words of a name or line, at least two letters, accents and case gone. */
export const wordsOf = (text: string): ReadonlyArray<string> => plain(text).split(/[^a-z0-9]+/u).filter((word) => word.length >= 2)

/** The words of a party's name that identify it. */
export const nameWords = (name: string): ReadonlyArray<string> => [...new Set(wordsOf(name).filter((word) => !STOP_WORDS.has(word) && !/^\d+$/u.test(word)))]

export const readLine = (parts: ReadonlyArray<string | null | undefined>): LineText => {
  const text = parts.filter((part): part is string => typeof part === "string" && part.length > 0).join(" ")
  const joined = text.replace(/(\d)[.\-/](?=\d)/gu, "$1")
  const sequence = wordsOf(text)
  return {
    words: new Set(sequence),
    sequence,
    digitRuns: new Set(joined.match(/\d+/gu) ?? []),
    compact: plain(text).replace(/[^a-z0-9]/gu, "").toUpperCase()
  }
}

/** Whether `words` appear in `sequence` in their order, others between them allowed. */
export const inOrder = (words: ReadonlyArray<string>, sequence: ReadonlyArray<string>): boolean => {
  let at = 0
  for (const word of sequence) if (word === words[at] && ++at === words.length) return true
  return words.length === 0
}
