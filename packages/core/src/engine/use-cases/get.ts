import { Effect, Option } from "effect"
import { authorize, can, forbidden, type Principal } from "../../auth/principal.js"
import { invalid } from "../../errors.js"
import { applyExpansions, parseExpand, withoutExpand } from "../expand.js"
import { makeCondition, parseBracketFilters } from "../filter.js"
import type { QueryParams } from "../list-query.js"
import { type AnyResource, present, type Row } from "../resource.js"
import { traced } from "../../traced.js"
import { and, checkId, found, notFound, requireId, untrustedParams, withDeletedParam } from "./checks.js"
import type { EngineContext, ReadFailure } from "./context.js"

/** Reads of one record: by id, plain or with parameters (`expand[]`, `with_deleted`), and by a declared lookup. */
export const makeGets = ({ repo }: EngineContext) => {
  /** The caller's visibility of a resource that limits reads by id too (else none). */
  const byIdScope = (resource: AnyResource, principal: Principal) =>
    resource.visibility?.byId ? resource.visibility.filter(principal) : undefined

  /**
   * A read naming no parameter, the most frequent request: the same checks and statement as
   * `getWith`, its permission checked before any effect runs and the rest one chain rather
   * than a generator, since every read by id pays for each step.
   */
  const getPlain = (resource: AnyResource, principal: Principal, id: string): Effect.Effect<Row, ReadFailure> => {
    const checked = plainRead(resource, principal, id)
    if (typeof checked !== "string") return Effect.fail(checked)
    const scope = byIdScope(resource, principal)
    return Effect.flatMap(repo.findById(resource, principal.tenantId, checked, scope ? { scope } : {}), (row) =>
      Option.isSome(row) ? Effect.succeed(present(resource, row.value)) : Effect.fail(notFound(resource)))
  }
  /** A plain read's checks, before any statement: its permission, then its id (as stored). */
  const plainRead = (resource: AnyResource, principal: Principal, id: string): string | ReadFailure =>
    can(principal, resource.permission, "read", resource.adminOnly) ? checkId(resource, id) : forbidden(principal, resource.permission, "read", resource.adminOnly)

  /** A read naming parameters (`expand[]`, `with_deleted`), checked before anything is read. */
  const getWith = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, id: string, params: QueryParams) {
    yield* untrustedParams(params)
    yield* authorize(principal, resource.permission, "read", resource.adminOnly)
    const expansions = yield* parseExpand(resource, params)
    const withDeleted = yield* withDeletedParam(withoutExpand(params))
    const checked = yield* requireId(resource, id)
    const scope = byIdScope(resource, principal)
    const row = yield* repo.findById(resource, principal.tenantId, checked, { withDeleted, ...(scope ? { scope } : {}) }).pipe(Effect.flatMap(found(resource)))
    if (expansions.length === 0) return present(resource, row)
    const [expanded] = yield* applyExpansions(repo, principal, [row], expansions)
    return present(resource, expanded)
  })
  const tracedGet = traced("ResourceEngine.get")
  const get = (resource: AnyResource, principal: Principal, id: string, params: QueryParams): Effect.Effect<Row, ReadFailure> =>
    tracedGet(params.length === 0 ? getPlain(resource, principal, id) : getWith(resource, principal, id, params))

  const lookup = Effect.fnUntraced(function* (resource: AnyResource, principal: Principal, name: string, value: string, params: QueryParams = []) {
    yield* untrustedParams(params)
    yield* authorize(principal, resource.permission, "read", resource.adminOnly)
    const declared = resource.lookups?.find((candidate) => candidate.name === name)
    if (!declared) return yield* Effect.fail(notFound(resource))
    const match = yield* Effect.fromResult(makeCondition(resource.filters, declared.field, "eq", declared.normalize ? declared.normalize(value) : value, declared.parameter))
    // A declared selector (e.g. `?country_iso2=US` on a state code) replaces the default scope.
    const allowed = declared.selectors ?? []
    const unknown = params.find(([key]) => !allowed.includes(key))
    if (unknown) {
      return yield* Effect.fail(invalid(`Unknown query parameter "${unknown[0]}"${allowed.length ? `; this lookup takes ${allowed.join(", ")}` : ""}`, "INVALID_PARAMETER"))
    }
    const selectors = yield* Effect.fromResult(parseBracketFilters(resource.filters, params))
    const scope = declared.scoped && selectors.length === 0 ? resource.visibility?.filter(principal) : undefined
    const filter = and(match, scope, ...selectors)!
    const row = yield* repo.findOne(resource, principal.tenantId, filter).pipe(Effect.flatMap(found(resource)))
    return present(resource, row)
  }, traced("ResourceEngine.lookup"))

  return { get, lookup }
}
