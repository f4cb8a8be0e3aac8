import { describe, expect, it } from "@effect/vitest"
import { type MatchLine, type OpenDocument, planAutoReconcile, suggest } from "../src/index.js"
import { generateStatement, type GeneratedStatement } from "../../../test/support/generated-statement.js"

const six = (amount: string) => Number(amount).toFixed(6)

/** The statement as the matcher sees it: receivables open in full, lines with what is left of them. */
const matcherInput = (statement: GeneratedStatement) => {
  const parties = new Map(statement.parties.map((party) => [party.id, party]))
  const documents: Array<OpenDocument> = statement.documents.map((document) => ({
    id: document.id,
    open: six(document.amount),
    dueDate: document.dueDate,
    partyId: document.partyId,
    partyNames: [parties.get(document.partyId)!.name],
    partyTaxId: parties.get(document.partyId)!.taxId,
    referenceCode: null,
    pixTxid: null,
    ourNumber: null
  }))
  const lines: Array<MatchLine> = statement.lines
    .filter((line) => !line.amount.startsWith("-"))
    .map((line) => ({ id: line.id, amount: line.amount, left: six(line.amount), postedAt: line.postedAt, text: [line.name, line.memo] }))
  return { documents, lines }
}

/** Precision: of the lines matched, how many exactly as the statement says; recall: of the lines that pay something, how many matched right. */
const accuracy = (statement: GeneratedStatement, minScore = 0.95) => {
  const { documents, lines } = matcherInput(statement)
  const plan = planAutoReconcile(lines, documents, minScore)
  const truth = new Map(statement.lines.map((line) => [line.id, line]))
  const key = (allocations: ReadonlyArray<{ documentId: string; amount: string }>) =>
    allocations.map((allocation) => `${allocation.documentId}:${six(allocation.amount)}`).sort().join(",")
  const wrong = plan.matched.filter(({ line, suggestion }) => key(suggestion.allocations) !== key(truth.get(line.id)!.pays))
  const matchable = statement.lines.filter((line) => line.pays.length > 0).length
  const right = plan.matched.length - wrong.length
  return { matched: plan.matched.length, wrong, matchable, precision: plan.matched.length === 0 ? 1 : right / plan.matched.length, recall: right / matchable, plan }
}

describe("automatic reconciliation on generated statements", () => {
  it.each([1, 2, 3])("matches 1,000 lines against 1,000 open documents with no wrong match and at least 90% of the payable lines (seed %i)", (seed) => {
    const statement = generateStatement({ seed, documents: 1000, lines: 1000, today: "2026-11-28" })
    expect(statement.documents.length).toBeGreaterThanOrEqual(1000)
    const result = accuracy(statement)
    console.log(`seed ${seed}: ${result.matched} matched of ${result.matchable} matchable lines, precision ${result.precision.toFixed(4)}, recall ${result.recall.toFixed(4)}`)
    expect(result.wrong.map(({ line }) => line.text.join(" "))).toEqual([])
    expect(result.precision).toBe(1)
    expect(result.recall).toBeGreaterThanOrEqual(0.9)
  })

  it("leaves lines whose best suggestions tie and lines that name nobody; a stricter threshold matches fewer", () => {
    const statement = generateStatement({ seed: 7, documents: 1000, lines: 1000, today: "2026-11-28" })
    const { plan } = accuracy(statement)
    const kinds = new Map(statement.lines.map((line) => [line.id, line.kind]))
    const left = (reason: string) => plan.left.filter((entry) => entry.reason === reason).map((entry) => kinds.get(entry.line.id))
    expect(left("ambiguous").length).toBeGreaterThan(0)
    expect(new Set(left("no_suggestion"))).toEqual(new Set(["noise"]))
    // A stricter threshold takes only the surest: fewer lines, none wrong either.
    const strict = accuracy(statement, 0.99)
    expect(strict.matched).toBeLessThan(plan.matched.length)
    expect(strict.wrong).toEqual([])
  })
})

describe("suggestions", () => {
  const document = (id: string, open: string, dueDate: string, extra: Partial<OpenDocument> = {}): OpenDocument => ({
    id, open, dueDate, partyId: `party-${id}`, partyNames: ["Torrefação Serra Azul Ltda"], partyTaxId: "04.252.011/0001-10",
    referenceCode: null, pixTxid: null, ourNumber: null, ...extra
  })
  const line = (amount: string, text: Array<string | null>, postedAt = "2026-11-20"): MatchLine => ({ id: "line", amount, left: amount, postedAt, text })

  it("scores a PIX txid in the line at 1, whatever else it says", () => {
    const [best] = suggest(line("10.000000", ["PIX", "TXID RECV8F2K3M9Q1Z7X5C4B6N0P2"]), [document("a", "10.000000", "2025-01-01", { pixTxid: "RECV8F2K3M9Q1Z7X5C4B6N0P2", partyNames: ["Outro"], partyTaxId: null })])
    expect(best).toMatchObject({ score: 1, reasons: ["amount_equal", "pix_txid_in_line"] })
  })

  it("reads a tax id whatever its punctuation, and names without accents, case or company form", () => {
    const [byTaxId] = suggest(line("10.000000", ["CRED 04252011000110"]), [document("a", "10.000000", "2026-11-20")])
    expect(byTaxId.reasons).toEqual(["amount_equal", "tax_id_in_line", "due_date_near"])
    const [byName] = suggest(line("10.000000", ["pix torrefacao SERRA azul"]), [document("a", "10.000000", "2026-11-01")])
    expect(byName).toMatchObject({ reasons: ["amount_equal", "name_in_line"], score: 0.9555 })
    // The words of a name in another order are someone else's; a name cut short by the bank is most of it.
    const [reordered] = suggest(line("10.000000", ["pix serra azul torrefacao"]), [document("a", "10.000000", "2026-11-01")])
    expect(reordered).toMatchObject({ reasons: ["amount_equal"], score: 0.585 })
    const [cut] = suggest(line("10.000000", ["PIX RECEBIDO TORREFACAO SERRA AZ"]), [document("a", "10.000000", "2026-11-19")])
    expect(cut).toMatchObject({ reasons: ["amount_equal", "name_partly_in_line", "due_date_near"], score: 0.95535 })
  })

  it("never suggests a document for more than the line has, and keeps a partial payment below an exact one", () => {
    const found = suggest(line("50.000000", ["TORREFACAO SERRA AZUL"]), [document("big", "80.000000", "2026-11-20"), document("exact", "50.000000", "2026-11-20")])
    expect(found.map((suggestion) => suggestion.allocations)).toEqual([[{ documentId: "exact", amount: "50.000000" }], [{ documentId: "big", amount: "50.000000" }]])
    expect(found[1].score).toBeLessThanOrEqual(0.9)
    expect(suggest(line("0.000000", ["TORREFACAO"]), [document("a", "10.000000", "2026-11-20")])).toEqual([])
  })
})
