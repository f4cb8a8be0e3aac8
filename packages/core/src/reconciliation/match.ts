import type BigNumber from "bignumber.js"
import { decimal, formatDecimal } from "../money/decimal.js"
import { inOrder, type LineText, nameWords, readLine, wordsOf } from "./text.js"

/** A statement line to match: money in settles receivables, money out payables. */
export interface MatchLine {
  readonly id: string
  /** Signed, as stored: positive in, negative out. */
  readonly amount: string
  /** What is left of it to allocate. */
  readonly left: string
  readonly postedAt: string
  readonly text: ReadonlyArray<string | null>
}

/** An open receivable or payable with what identifies it and its counterparty. */
export interface OpenDocument {
  readonly id: string
  readonly open: string
  readonly dueDate: string
  readonly partyId: string | null
  readonly partyNames: ReadonlyArray<string>
  readonly partyTaxId: string | null
  readonly referenceCode: string | null
  readonly pixTxid: string | null
  readonly ourNumber: string | null
}

export type MatchReason =
  | "amount_equal"
  | "amount_sum_of_documents"
  | "amount_partial"
  | "only_open_document"
  | "due_date_near"
  | "tax_id_in_line"
  | "name_in_line"
  | "name_partly_in_line"
  | "reference_in_line"
  | "our_number_in_line"
  | "pix_txid_in_line"

export const MATCH_REASONS: ReadonlyArray<MatchReason> = [
  "amount_equal", "amount_sum_of_documents", "amount_partial", "only_open_document", "due_date_near", "tax_id_in_line", "name_in_line",
  "name_partly_in_line", "reference_in_line", "our_number_in_line", "pix_txid_in_line"
]

export interface Suggestion {
  /** From 0 to 1, six digits at most. */
  readonly score: number
  readonly reasons: ReadonlyArray<MatchReason>
  /** What accepting it allocates: the line's money over the documents, oldest due first. */
  readonly allocations: ReadonlyArray<{ readonly documentId: string; readonly amount: string }>
}

/** At most this many suggestions per line, best first. */
export const MAX_SUGGESTIONS = 10
/** At most this many of one party's documents paid by one line, looked for among its 16 nearest. */
const MAX_GROUP = 4
const GROUP_POOL = 16

/**
 * The score is how sure it is that the line comes from the document's party, times how sure,
 * given that, that it pays these documents of the party's. Who pays: its tax id in the line
 * (0.995), its whole name (0.98), both (0.999), most of its name in its order (0.965: a bank cuts
 * long names), nothing (0.6: the amount
 * and date alone). Which documents: the amount exactly one's (0.93, up to 0.99 as the due date
 * nears the posting), several's together (0.95; 0.975 within 10 days), part of the party's only
 * open one (0.95; 0.98 within 3 days), or part of one of several (0.9 within 3 days, 0.6 within
 * 10, else 0.3). Identifiers only one document carries decide alone: a PIX txid 1, an our number
 * 0.99, a reference code 0.97 (with an amount that fits).
 */
const PARTY: Readonly<Record<"both" | "tax_id" | "name" | "partly" | "none", number>> = { both: 0.999, tax_id: 0.995, name: 0.98, partly: 0.965, none: 0.6 }
const IDENTIFIER: Readonly<Record<"pix_txid_in_line" | "our_number_in_line" | "reference_in_line", number>> = {
  pix_txid_in_line: 1,
  our_number_in_line: 0.99,
  reference_in_line: 0.97
}
/** The most a partial payment scores when the line's amount is exactly some documents' (below the usual automatic threshold). */
const PARTIAL_BESIDE_WHOLE = 0.9

const exactWeight = (days: number) => (days <= 3 ? 0.99 : days <= 10 ? 0.985 : days <= 31 ? 0.975 : 0.93)
const groupWeight = (days: number) => (days <= 10 ? 0.975 : 0.95)
const partialWeight = (days: number, only: boolean) => (only ? (days <= 3 ? 0.98 : 0.95) : days <= 3 ? 0.97 : days <= 10 ? 0.6 : 0.3)

const DAY = 86_400_000
const daysBetween = (a: string, b: string) => Math.round(Math.abs(Date.parse(`${a}T00:00:00Z`) - Date.parse(`${b}T00:00:00Z`)) / DAY)
const round = (score: number) => Math.round(score * 1_000_000) / 1_000_000

/** What is read of a document once per run, not once per line. */
export interface Prepared {
  readonly document: OpenDocument
  readonly open: BigNumber
  readonly taxId: string
  readonly names: ReadonlyArray<ReadonlyArray<string>>
  readonly ourNumber: string
  readonly reference: string
}

const prepared = new WeakMap<OpenDocument, Prepared>()
const prepare = (document: OpenDocument): Prepared => {
  const known = prepared.get(document)
  if (known) return known
  const reference = document.referenceCode ? wordsOf(document.referenceCode).join("") : ""
  const made: Prepared = {
    document,
    open: decimal(document.open),
    taxId: document.partyTaxId?.replace(/\D/gu, "") ?? "",
    names: document.partyNames.map(nameWords).filter((words) => words.length > 0),
    ourNumber: document.ourNumber?.replace(/\D/gu, "").replace(/^0+/u, "") ?? "",
    reference: reference.length >= 4 && /\d/u.test(reference) ? reference : ""
  }
  prepared.set(document, made)
  return made
}

/** Signs of the counterparty: its tax id among the line's digits, its name's words among the line's. */
const partySigns = (line: LineText, document: Prepared): ReadonlyArray<MatchReason> => {
  const reasons: Array<MatchReason> = []
  if (document.taxId.length >= 8 && line.digitRuns.has(document.taxId)) reasons.push("tax_id_in_line")
  let best: MatchReason | undefined
  for (const words of document.names) {
    const found = words.filter((word) => line.words.has(word)).length
    if (found === words.length && (words.length >= 2 || words[0].length >= 4) && inOrder(words, line.sequence)) best = "name_in_line"
    else if (best === undefined && found >= 2 && found * 2 >= words.length && inOrder(words.filter((word) => line.words.has(word)), line.sequence)) best = "name_partly_in_line"
  }
  if (best) reasons.push(best)
  return reasons
}

const strong = (reasons: ReadonlyArray<MatchReason>) => reasons.includes("tax_id_in_line") || reasons.includes("name_in_line")
/** Signs that name more than one party say only that the line is someone's of them. */
const weaken = (reasons: ReadonlyArray<MatchReason>): ReadonlyArray<MatchReason> => (strong(reasons) ? ["name_partly_in_line"] : reasons)

const partyWeight = (reasons: ReadonlyArray<MatchReason>) => {
  const tax = reasons.includes("tax_id_in_line")
  const name = reasons.includes("name_in_line")
  return tax && name ? PARTY.both : tax ? PARTY.tax_id : name ? PARTY.name : reasons.includes("name_partly_in_line") ? PARTY.partly : PARTY.none
}

/** Identifiers only this document carries: its PIX txid, its boleto's our number, its reference code. */
const identifierSigns = (line: LineText, document: Prepared): ReadonlyArray<keyof typeof IDENTIFIER> => {
  const reasons: Array<keyof typeof IDENTIFIER> = []
  const txid = document.document.pixTxid
  if (txid && txid.length >= 10 && line.compact.includes(txid.toUpperCase())) reasons.push("pix_txid_in_line")
  if (document.ourNumber.length >= 6 && line.digitRuns.has(document.ourNumber)) reasons.push("our_number_in_line")
  if (document.reference && (line.words.has(document.reference) || line.digitRuns.has(document.reference))) reasons.push("reference_in_line")
  return reasons
}

const scored = (reasons: ReadonlyArray<MatchReason>, which: number, identifiers: ReadonlyArray<keyof typeof IDENTIFIER>, allocations: Suggestion["allocations"]): Suggestion => {
  const byParty = partyWeight(reasons) * which
  const byIdentifier = Math.max(0, ...identifiers.map((reason) => IDENTIFIER[reason]))
  return { score: round(Math.max(byParty, byIdentifier)), reasons: [...reasons, ...identifiers], allocations }
}

/**
 * Open documents looked up by what a line can name: their open amount, their party's tax id and
 * the first word of its names, their identifiers. A line is scored against the documents it
 * names this way, not against every open document.
 */
export interface MatchIndex {
  readonly candidates: (line: LineText, money: BigNumber) => ReadonlyArray<Prepared>
  /** What a line took off a document: it leaves the index, or comes back with what is still open. */
  readonly settle: (documentId: string, amount: string) => void
}

const addTo = <K, V>(map: Map<K, Set<V>>, key: K, value: V) => (map.get(key) ?? map.set(key, new Set()).get(key)!).add(value)

export const matchIndex = (documents: ReadonlyArray<OpenDocument>): MatchIndex => {
  const byId = new Map<string, Prepared>()
  const byAmount = new Map<string, Set<Prepared>>()
  const byParty = new Map<string, Set<Prepared>>()
  const partiesByKey = new Map<string, Set<string>>()
  const byIdentifier = new Map<string, Set<Prepared>>()
  const add = (document: Prepared) => {
    byId.set(document.document.id, document)
    addTo(byAmount, formatDecimal(document.open), document)
    const party = document.document.partyId
    if (party !== null) {
      addTo(byParty, party, document)
      if (document.taxId.length >= 8) addTo(partiesByKey, `tax:${document.taxId}`, party)
      for (const words of document.names) addTo(partiesByKey, `word:${words[0]}`, party)
    }
    if (document.document.pixTxid) addTo(byIdentifier, `word:${document.document.pixTxid.toLowerCase()}`, document)
    if (document.ourNumber) addTo(byIdentifier, `digits:${document.ourNumber}`, document)
    if (document.reference) addTo(byIdentifier, `word:${document.reference}`, document)
  }
  const remove = (document: Prepared) => {
    byId.delete(document.document.id)
    byAmount.get(formatDecimal(document.open))?.delete(document)
    if (document.document.partyId !== null) byParty.get(document.document.partyId)?.delete(document)
    for (const set of byIdentifier.values()) set.delete(document)
  }
  for (const document of documents) {
    const made = prepare(document)
    if (made.open.gt(0)) add(made)
  }
  return {
    candidates: (line, money) => {
      const found = new Set<Prepared>(byAmount.get(formatDecimal(money)))
      const parties = new Set<string>()
      for (const run of line.digitRuns) {
        for (const party of partiesByKey.get(`tax:${run}`) ?? []) parties.add(party)
        for (const document of byIdentifier.get(`digits:${run.replace(/^0+/u, "")}`) ?? []) found.add(document)
        for (const document of byIdentifier.get(`word:${run}`) ?? []) found.add(document)
      }
      for (const word of line.words) {
        for (const party of partiesByKey.get(`word:${word}`) ?? []) parties.add(party)
        for (const document of byIdentifier.get(`word:${word}`) ?? []) found.add(document)
      }
      for (const party of parties) for (const document of byParty.get(party) ?? []) found.add(document)
      return [...found]
    },
    settle: (documentId, amount) => {
      const document = byId.get(documentId)
      if (!document) return
      remove(document)
      const rest = document.open.minus(amount)
      if (rest.gt(0)) add(prepare({ ...document.document, open: formatDecimal(rest) }))
    }
  }
}

/**
 * The documents a line may pay, scored. A line pays one document whole (its amount equal to what
 * is open), part of one of the party it names (less than is open), or several of that party whole
 * (their open amounts adding up to the line's): one suggestion for the group.
 */
export const suggest = (line: MatchLine, documents: ReadonlyArray<OpenDocument> | MatchIndex): ReadonlyArray<Suggestion> => {
  const text = readLine(line.text)
  const money = decimal(line.left)
  if (!money.gt(0)) return []
  const index = "candidates" in documents ? documents : matchIndex(documents)
  const all = index.candidates(text, money)
  const found: Array<Suggestion> = []
  const byParty = new Map<string, Array<Prepared>>()
  /** Per party, how many of its documents the line could pay part of. */
  const largerOfParty = new Map<string, number>()
  const signs = new Map(all.map((document) => [document, partySigns(text, document)]))
  for (const document of all) {
    const party = document.document.partyId
    if (party !== null && document.open.gt(money)) largerOfParty.set(party, (largerOfParty.get(party) ?? 0) + 1)
  }
  // Who paid is the one party the line names: by tax id when one has it there, else by name. Two
  // named alike say only that the line is someone's of them.
  const partiesWith = (reason: MatchReason) => new Set(all.filter((document) => signs.get(document)!.includes(reason)).map((document) => document.document.partyId))
  const byTaxId = partiesWith("tax_id_in_line")
  const named = byTaxId.size > 0 ? byTaxId : partiesWith("name_in_line")
  const partyOf = (document: Prepared) => {
    const own = signs.get(document)!
    if (named.size !== 1) return weaken(own)
    // One party named in full: another whose name the line only shares words with is not named at all.
    return named.has(document.document.partyId) ? own : []
  }
  for (const document of all) {
    const party = partyOf(document)
    const identifiers = identifierSigns(text, document)
    const days = daysBetween(line.postedAt, document.document.dueDate)
    const near: ReadonlyArray<MatchReason> = days <= 10 ? ["due_date_near"] : []
    const allocation = [{ documentId: document.document.id, amount: formatDecimal(money.gte(document.open) ? document.open : money) }]
    if (money.eq(document.open)) {
      found.push(scored(["amount_equal", ...party, ...near], exactWeight(days), identifiers, allocation))
    } else if (money.lt(document.open)) {
      const only = document.document.partyId !== null && largerOfParty.get(document.document.partyId) === 1 && strong(party)
      found.push(scored(["amount_partial", ...(only ? ["only_open_document" as const] : []), ...party, ...(days <= 3 ? ["due_date_near" as const] : [])], partialWeight(days, only), identifiers, allocation))
    } else if (identifiers.length > 0) {
      // More than is open, and the document named by an identifier: it takes what is open.
      found.push(scored([...party], 0, identifiers, allocation))
    }
    if (document.document.partyId !== null && document.open.lt(money)) {
      const list = byParty.get(document.document.partyId) ?? byParty.set(document.document.partyId, []).get(document.document.partyId)!
      list.push(document)
    }
  }
  for (const members of byParty.values()) {
    const group = groupFor(members, money, line.postedAt)
    if (!group) continue
    const party = partyOf(group[0])
    const identifiers = [...new Set(group.flatMap((document) => identifierSigns(text, document)))]
    const days = Math.min(...group.map((document) => daysBetween(line.postedAt, document.document.dueDate)))
    const allocations = group.map((document) => ({ documentId: document.document.id, amount: formatDecimal(document.open) }))
    found.push(scored(["amount_sum_of_documents", ...party, ...(days <= 10 ? ["due_date_near" as const] : [])], groupWeight(days), identifiers, allocations))
  }
  // A line whose amount is exactly some documents' is theirs before it is part of another's.
  const whole = found.some((candidate) => candidate.reasons.includes("amount_equal") || candidate.reasons.includes("amount_sum_of_documents"))
  return found
    .map((candidate) => (whole && candidate.reasons.includes("amount_partial") ? { ...candidate, score: Math.min(candidate.score, PARTIAL_BESIDE_WHOLE) } : candidate))
    .filter((candidate) => candidate.score > 0)
    .sort((a, b) => b.score - a.score || a.allocations.length - b.allocations.length || (a.allocations[0].documentId < b.allocations[0].documentId ? -1 : 1))
    .slice(0, MAX_SUGGESTIONS)
}

/**
 * Two to four of one party's documents whose open amounts add up to the line's, among its 16 due
 * nearest the posting: the set due earliest when several add up (installments are paid in order).
 */
const groupFor = (documents: ReadonlyArray<Prepared>, money: BigNumber, postedAt: string): ReadonlyArray<Prepared> | undefined => {
  if (documents.length < 2) return undefined
  const pool = [...documents]
    .sort((a, b) => daysBetween(postedAt, a.document.dueDate) - daysBetween(postedAt, b.document.dueDate) || (a.document.id < b.document.id ? -1 : 1))
    .slice(0, GROUP_POOL)
    .sort((a, b) => (a.document.dueDate < b.document.dueDate ? -1 : a.document.dueDate > b.document.dueDate ? 1 : a.document.id < b.document.id ? -1 : 1))
  let found: ReadonlyArray<Prepared> | undefined
  const walk = (start: number, chosen: ReadonlyArray<Prepared>, sum: BigNumber): boolean => {
    if (chosen.length >= 2 && sum.eq(money)) {
      found = chosen
      return true
    }
    if (chosen.length === MAX_GROUP) return false
    for (let index = start; index < pool.length; index++) {
      const next = sum.plus(pool[index].open)
      if (next.gt(money)) continue
      if (walk(index + 1, [...chosen, pool[index]], next)) return true
    }
    return false
  }
  walk(0, [], decimal(0))
  return found
}
