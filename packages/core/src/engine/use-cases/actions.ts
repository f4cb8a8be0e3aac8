import { Effect } from "effect"
import { authorize, type Principal } from "../../auth/principal.js"
import { invalid, type InvalidRequest } from "../../errors.js"
import { decodeBody } from "../decode.js"
import { checkPrecondition } from "../etag.js"
import type { AnyResource, ResourceAction } from "../resource.js"
import { traced } from "../../traced.js"
import { requireId, requireUuid, unlessFailed } from "./checks.js"
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

/** Declared actions (allocate, cancel, import a file): run on one locked record, in one unit of work. */
export const makeActions = ({ units, services }: EngineContext, { locked }: Pick<ReturnType<typeof makeRecordWrites>, "locked">, currentStore: CurrentStore) =>
  Effect.fnUntraced(function* (
    resource: AnyResource,
    declared: ResourceAction,
    principal: Principal,
    id: string,
    params: Readonly<Record<string, string>>,
    body: unknown,
    options: WriteOptions = {}
  ) {
    yield* authorize(principal, resource.permission, declared.permission, resource.adminOnly)
    const checked = yield* requireId(resource, id)
    const checkedParams: Record<string, string> = {}
    for (const [name, value] of Object.entries(params)) checkedParams[name] = yield* requireUuid(value, name)
    const input = declared.raw ? yield* rawInput(declared, body) : declared.input ? yield* decodeBody(declared.input, body) : undefined
    return yield* units.run(
      origin(principal),
      Effect.gen(function* () {
        const current = yield* locked(resource, principal, checked)
        yield* unlessFailed(checkPrecondition(resource, current, options.precondition))
        const store = yield* currentStore(principal)
        const output = yield* declared.run({ principal, resource, current, params: checkedParams, store }, input).pipe(
          Effect.provide(services)
        )
        if (declared.emits !== false) yield* emit(resource, "update", checked)
        return output
      })
    )
  }, traced("ResourceEngine.action"))
