import { type MatchLine, matchIndex, type OpenDocument, suggest, type Suggestion } from "./match.js"

export type LeftReason = "no_suggestion" | "below_threshold" | "ambiguous"

export interface AutoPlan {
  readonly matched: ReadonlyArray<{ readonly line: MatchLine; readonly suggestion: Suggestion }>
  readonly left: ReadonlyArray<{ readonly line: MatchLine; readonly reason: LeftReason; readonly best: number | null }>
}

/**
 * Which lines an automatic run reconciles, and with what: a line's suggestion is taken only when
 * it alone reaches `minScore`. Lines are taken oldest first, and what one takes is no longer open
 * to the next, so two lines never claim the same money.
 */
export const planAutoReconcile = (lines: ReadonlyArray<MatchLine>, documents: ReadonlyArray<OpenDocument>, minScore: number): AutoPlan => {
  const index = matchIndex(documents)
  const matched: Array<AutoPlan["matched"][number]> = []
  const left: Array<AutoPlan["left"][number]> = []
  const ordered = [...lines].sort((a, b) => (a.postedAt < b.postedAt ? -1 : a.postedAt > b.postedAt ? 1 : a.id < b.id ? -1 : 1))
  for (const line of ordered) {
    const suggestions = suggest(line, index)
    const above = suggestions.filter((suggestion) => suggestion.score >= minScore)
    if (above.length !== 1) {
      left.push({ line, reason: suggestions.length === 0 ? "no_suggestion" : above.length === 0 ? "below_threshold" : "ambiguous", best: suggestions[0]?.score ?? null })
      continue
    }
    const [suggestion] = above
    matched.push({ line, suggestion })
    for (const allocation of suggestion.allocations) index.settle(allocation.documentId, allocation.amount)
  }
  return { matched, left }
}
