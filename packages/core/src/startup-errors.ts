import { Cause, Option } from "effect"
import { InvalidSetting } from "./config/load.js"
import type { StoreLocation } from "./store/database.js"
import { DataDirLocked } from "./store/lock.js"

/**
 * A host or command that could not start: `problem` names what failed (`cannot connect to
 * PostgreSQL at 127.0.0.1:5999: connection refused`), `hint` what to do. `cause` keeps the
 * original error for `--verbose`.
 */
export class StartupError extends Error {
  readonly _tag = "StartupError"
  constructor(readonly problem: string, readonly hint: string | undefined, options?: { readonly cause?: unknown }) {
    super(hint ? `${problem}; ${hint}` : problem, options)
  }
}

/** What was being started, so an error can name it. */
export interface StartupContext {
  readonly store?: StoreLocation
  readonly listen?: { readonly host: string; readonly port: number }
  /** How the user chooses another port (`pass --port`). */
  readonly portHint?: string
  /** How the user chooses another database (`check --database-url or DATABASE_URL`). */
  readonly databaseHint?: string
}

/** The address a host was to listen on could not be had (the port probe's failure). */
export class ListenError extends Error {
  readonly _tag = "ListenError"
}

interface Coded {
  readonly code?: unknown
  readonly message?: unknown
  readonly cause?: unknown
  readonly errors?: unknown
}

/** The errors a failure is made of, outermost first: Effect causes unwrapped, `cause` chains followed. */
const chain = (error: unknown): ReadonlyArray<unknown> => {
  const out: Array<unknown> = []
  let current: unknown = error
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (Cause.isCause(current)) {
      const failure = Cause.findErrorOption(current)
      current = Option.isSome(failure) ? failure.value : Cause.squash(current)
    }
    out.push(current)
    const coded = current as Coded
    // Node's AggregateError (several addresses tried) carries the code; its parts say the same.
    current = coded.cause ?? (Array.isArray(coded.errors) ? coded.errors[0] : undefined)
  }
  return out
}

const codeOf = (errors: ReadonlyArray<unknown>): string | undefined => {
  for (const error of errors) {
    const code = (error as Coded | undefined)?.code
    if (typeof code === "string") return code
  }
  return undefined
}

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : typeof error === "object" && error !== null && "message" in error ? String((error as Coded).message) : String(error)

const postgresAddress = (url: string) => {
  try {
    const parsed = new URL(url)
    return {
      address: `${parsed.hostname || "localhost"}:${parsed.port || "5432"}`,
      database: decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username) || "postgres",
      user: decodeURIComponent(parsed.username) || "the default user"
    }
  } catch {
    return { address: "(unparsable DATABASE_URL)", database: "?", user: "?" }
  }
}

const explainPostgres = (url: string, errors: ReadonlyArray<unknown>, hint: string): StartupError | undefined => {
  const { address, database, user } = postgresAddress(url)
  const cannot = (reason: string, what = hint) => new StartupError(`cannot connect to PostgreSQL at ${address}: ${reason}`, what, { cause: errors[0] })
  const code = codeOf(errors)
  switch (code) {
    case "ECONNREFUSED":
      return cannot("connection refused", `is PostgreSQL running there? ${hint}`)
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return cannot("host not found")
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return cannot("no answer from the host")
    case "3D000":
      return cannot(`database "${database}" does not exist`, `create it (createdb -h ${address.split(":")[0]} -p ${address.split(":")[1]} ${database}) or ${hint}`)
    case "28P01":
      return cannot(`password authentication failed for user "${user}"`)
    case "28000":
      return cannot(`the server refuses user "${user}" (pg_hba.conf or role)`)
    case "57P03":
      return cannot("the server is starting up or shutting down", "try again in a moment")
    case "53300":
      return cannot("too many connections", "close some or raise max_connections")
  }
  if (errors.some((error) => messageOf(error).includes("Connection timed out"))) return cannot("no answer within 5 seconds")
  // PgBouncer in transaction mode refuses the session settings erp sends as a connection starts.
  const refused = errors.map(messageOf).find((message) => message.includes("unsupported startup parameter"))
  if (refused) return cannot(`${refused}: a pooler in transaction mode`, "set ERP_DB_POOLER=transaction (docs/operations.md)")
  if (errors.some((error) => messageOf(error).includes("PgClient: Failed to connect"))) {
    return cannot(messageOf(errors[errors.length - 1]))
  }
  return undefined
}

const explainListen = (listen: NonNullable<StartupContext["listen"]>, errors: ReadonlyArray<unknown>, hint: string): StartupError | undefined => {
  const cause = { cause: errors[0] }
  switch (codeOf(errors)) {
    case "EADDRINUSE":
      return new StartupError(`port ${listen.port} is already in use`, hint, cause)
    case "EACCES":
      return new StartupError(`no permission to listen on port ${listen.port}`, `ports below 1024 need privileges; ${hint}`, cause)
    case "EADDRNOTAVAIL":
      return new StartupError(`cannot listen on ${listen.host}: the address is not one of this machine's`, "pass --host", cause)
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return new StartupError(`cannot listen on ${listen.host}: host not found`, "pass --host", cause)
  }
  return undefined
}

/**
 * A start-up failure as one or two plain lines: the store that cannot be opened, the port
 * that cannot be had, a setting that cannot be used. Anything else keeps its own message.
 */
export const explainStartupFailure = (error: unknown, context: StartupContext = {}): StartupError => {
  const errors = chain(error)
  const known = errors.find((item): item is StartupError | DataDirLocked | InvalidSetting =>
    item instanceof StartupError || item instanceof DataDirLocked || item instanceof InvalidSetting)
  if (known instanceof StartupError) return known
  if (known) return new StartupError(known.message, undefined, { cause: known })
  const listening = errors.some((item) => {
    const tag = (item as { readonly _tag?: unknown } | undefined)?._tag
    return tag === "ServeError" || tag === "ListenError" || (item as { readonly syscall?: unknown } | undefined)?.syscall === "listen"
  })
  const listen = listening && context.listen ? explainListen(context.listen, errors, context.portHint ?? "pass --port") : undefined
  if (listen) return listen
  const store = context.store?.kind === "postgres"
    ? explainPostgres(context.store.url, errors, context.databaseHint ?? "check --database-url or DATABASE_URL")
    : undefined
  if (store) return store
  const innermost = errors[errors.length - 1] ?? error
  const outer = messageOf(errors[0] ?? error)
  const inner = messageOf(innermost)
  return new StartupError(outer === inner || outer === "" ? inner : `${outer}: ${inner}`, undefined, { cause: errors[0] ?? error })
}
