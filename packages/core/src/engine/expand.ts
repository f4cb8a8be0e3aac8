import { Effect } from "effect"
import { authorize, type Principal } from "../auth/principal.js"
import { type Forbidden, invalid, type InvalidRequest } from "../errors.js"
import type { QueryParams } from "./list-query.js"
import type { ResourceRepository } from "./repository.js"
import { type AnyResource, type Expansion, present, type Row } from "./resource.js"

/** The query keys that ask for expansions: Stripe's `expand[]=a&expand[]=b`, and `expand=a,b`. */
export const EXPAND_PARAMETERS = ["expand", "expand[]"] as const

const isExpandKey = (key: string) => (EXPAND_PARAMETERS as ReadonlyArray<string>).includes(key)

/** Query pairs without the expansion ones (what the rest of a read parses). */
export const withoutExpand = (params: QueryParams): QueryParams => params.filter(([key]) => !isExpandKey(key))

/**
 * The expansions a request asks for, each a declared one of the resource; an unknown
 * path is 400 naming it and the ones there are.
 */
export const parseExpand = (resource: AnyResource, params: QueryParams): Effect.Effect<ReadonlyArray<Expansion>, InvalidRequest> => {
  const asked = [...new Set(params.filter(([key]) => isExpandKey(key)).flatMap(([, value]) => value.split(",")).map((path) => path.trim()).filter(Boolean))]
  const chosen: Array<Expansion> = []
  for (const path of asked) {
    const expansion = resource.expansions.find((candidate) => candidate.path === path)
    if (!expansion) {
      const offered = resource.expansions.map((candidate) => candidate.path)
      const shown = path.length > 60 ? `${path.slice(0, 60)}…` : path
      return Effect.fail(invalid(
        `Cannot expand "${shown}" on ${resource.name}; ${offered.length ? `expandable: ${offered.join(", ")}` : "it has nothing to expand"}`,
        "INVALID_PARAMETER",
        { expand: [`"${shown}" is not expandable`] }
      ))
    }
    chosen.push(expansion)
  }
  return Effect.succeed(chosen)
}

type Repository = typeof ResourceRepository.Service

const idsOf = (records: ReadonlyArray<Row>, expansion: Expansion): ReadonlyArray<string> => {
  const holders = expansion.collection
    ? records.flatMap((record) => (record[expansion.collection!] as ReadonlyArray<Row> | undefined) ?? [])
    : records
  return [...new Set(holders.map((holder) => holder[expansion.key]).filter((id) => id !== null && id !== undefined).map(String))]
}

const fill = (holder: Row, expansion: Expansion, byId: ReadonlyMap<string, Row>): Row => {
  const id = holder[expansion.key]
  return { ...holder, [expansion.field]: id === null || id === undefined ? null : byId.get(String(id)) ?? null }
}

/**
 * Replaces each asked embed with the full record, as `GET /<resource>/{id}` answers it,
 * for a whole page at once: one query per expansion (the target's own embeds built in it),
 * never one per record. The caller needs read permission on the expanded
 * resource (403 otherwise); like an embed, a record deleted since still shows.
 */
export const applyExpansions = (
  repo: Repository,
  principal: Principal,
  records: ReadonlyArray<Row>,
  expansions: ReadonlyArray<Expansion>
): Effect.Effect<ReadonlyArray<Row>, Forbidden> =>
  Effect.gen(function* () {
    let out = records
    for (const expansion of expansions) {
      const target = expansion.resource()
      yield* authorize(principal, target.permission, "read", target.adminOnly)
      const ids = idsOf(out, expansion)
      const found = ids.length === 0 ? [] : yield* repo.findByIds(target, principal.tenantId, ids)
      const byId = new Map(found.map((record) => [String(record.id), present(target, record)]))
      out = out.map((record) =>
        expansion.collection
          ? { ...record, [expansion.collection]: ((record[expansion.collection] as ReadonlyArray<Row> | undefined) ?? []).map((child) => fill(child, expansion, byId)) }
          : fill(record, expansion, byId)
      )
    }
    return out
  })
