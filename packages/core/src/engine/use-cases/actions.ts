import { Effect } from "effect"
import { authorize, type Principal } from "../../auth/principal.js"
import { invalid, type InvalidRequest } from "../../errors.js"
import { decodeBody } from "../decode.js"
import { checkPrecondition, type Precondition } from "../etag.js"
import type { AnyResource, ResourceAction } from "../resource.js"
import { traced } from "../../traced.js"
import { found, requireId, requireUuid, unlessFailed } from "./checks.js"
import type { CurrentStore, EngineContext, WriteOptions } from "./context.js"
import { emit, origin } from "./drafts.js"
import type { makeRecordWrites } from "./writes.js"

/** A raw body (a file) as the action receives it: bytes or text, never empty, within its size. */
const rawInput = (declared: ResourceAction, body: unknown): Effect.Effect<Uint8Array | string, InvalidRequest> => {
  const raw = declared.raw!
  const size = body instanceof Uint8Array ? body.byteLength : typeof body === "string" ? Buffer.byteLength(body) : -1
  if (size < 0) return Effect.fail(invalid(`The request body must be the file (${raw.contentType})`, "INVALID_BODY"))
  if (size === 0) return Effect.fail(invalid(`The request body is empty: send the file (${raw.contentType})`, "INVALID_BODY"))
  if (size > raw.maxBytes) return Effect.fail(invalid(`The file exceeds ${raw.maxBytes} bytes`, "PAYLOAD_TOO_LARGE"))
  return Effect.succeed(body as Uint8Array | string)
}

/**
 * Declared actions (allocate, cancel, import a file): run on one locked record, in one unit of
 * work; a `GET` action reads the record without a lock and records nothing. `within` runs one
 * inside a unit already open (an action running another record's action).
 */
export const makeActions = ({ units, services, repo }: EngineContext, { locked }: Pick<ReturnType<typeof makeRecordWrites>, "locked">, currentStore: CurrentStore) => {
  /** The caller's right to it, the record's id, its path parameters and its body, checked before any unit opens. */
  const prepare = (resource: AnyResource, declared: ResourceAction, principal: Principal, id: string, params: Readonly<Record<string, string>>, body: unknown) =>
    Effect.gen(function* () {
      yield* authorize(principal, resource.permission, declared.permission, resource.adminOnly)
      const checked = yield* requireId(resource, id)
      const checkedParams: Record<string, string> = {}
      for (const [name, value] of Object.entries(params)) checkedParams[name] = yield* requireUuid(value, name)
      const input = declared.raw ? yield* rawInput(declared, body) : declared.input ? yield* decodeBody(declared.input, body) : undefined
      return { checked, params: checkedParams, input }
    })

  const run = (resource: AnyResource, declared: ResourceAction, principal: Principal, prepared: Effect.Success<ReturnType<typeof prepare>>, precondition?: Precondition) =>
    Effect.gen(function* () {
      const reads = declared.method === "GET"
      const current = reads
        ? yield* repo.findById(resource, principal.tenantId, prepared.checked).pipe(Effect.flatMap(found(resource)))
        : yield* locked(resource, principal, prepared.checked)
      yield* unlessFailed(checkPrecondition(resource, current, precondition))
      const store = yield* currentStore(principal)
      const output = yield* declared.run({ principal, resource, current, params: prepared.params, store }, prepared.input).pipe(Effect.provide(services))
      if (!reads && declared.emits !== false) yield* emit(resource, "update", prepared.checked)
      return output
    })

  const action = Effect.fnUntraced(function* (
    resource: AnyResource,
    declared: ResourceAction,
    principal: Principal,
    id: string,
    params: Readonly<Record<string, string>>,
    body: unknown,
    options: WriteOptions = {}
  ) {
    const prepared = yield* prepare(resource, declared, principal, id, params, body)
    return yield* units.run(origin(principal), run(resource, declared, principal, prepared, options.precondition))
  }, traced("ResourceEngine.action"))

  /** An action of `resource` named `name`, run inside the caller's unit of work. */
  const within = (resource: AnyResource, name: string, principal: Principal, id: string, params: Readonly<Record<string, string>>, body: unknown) =>
    Effect.gen(function* () {
      const declared = resource.actions?.find((candidate) => candidate.name === name)
      if (!declared) return yield* Effect.die(new Error(`${resource.name} declares no action ${name}`))
      return yield* run(resource, declared, principal, yield* prepare(resource, declared, principal, id, params, body))
    })

  return { action, within }
}
