import { Result } from "effect"
import { invalid, type InvalidRequest } from "../errors.js"
import type { QueryParams } from "../engine/list-query.js"
import { isUuid } from "../engine/filter.js"

/** What a report's query parameter takes. */
export type ParameterKind =
  | { readonly type: "date" }
  | { readonly type: "uuid" }
  | { readonly type: "choice"; readonly values: ReadonlyArray<string> }
  /** Comma-separated whole numbers of days, rising: aging buckets' upper bounds. */
  | { readonly type: "days" }

export interface ReportParameter {
  readonly kind: ParameterKind
  readonly description: string
}

export type ReportParameters = Readonly<Record<string, ReportParameter>>

/** A parameter's JSON Schema, for the OpenAPI document and MCP tools alike. */
export const parameterJsonSchema = (kind: ParameterKind): Record<string, unknown> => {
  switch (kind.type) {
    case "date":
      return { type: "string", format: "date" }
    case "uuid":
      return { type: "string", format: "uuid" }
    case "choice":
      return { type: "string", enum: [...kind.values] }
    case "days":
      return { type: "string", pattern: "^[0-9]{1,4}(,[0-9]{1,4})*$", examples: ["30,60,90"] }
  }
}

/** The parameters as sent, checked against their kind; those not sent are absent. */
export type ParameterValues<P extends ReportParameters> = { readonly [K in keyof P]?: string }

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** A calendar date `YYYY-MM-DD` that exists (no 2026-02-30). */
export const isDate = (text: string): boolean => {
  const match = DATE.exec(text)
  if (!match) return false
  const day = new Date(`${text}T00:00:00Z`)
  return !Number.isNaN(day.getTime()) && day.toISOString().slice(0, 10) === text
}

/** Most buckets an aging report takes, and the largest bound (ten years of days). */
export const MAX_BUCKETS = 12
export const MAX_BUCKET_DAYS = 3650

const problem = (name: string, reason: string, code = "INVALID_PARAMETER") => Result.fail(invalid(`Invalid ${name}: ${reason}`, code, { [name]: [reason] }))

const checked = (name: string, kind: ParameterKind, value: string): Result.Result<string, InvalidRequest> => {
  switch (kind.type) {
    case "date":
      return isDate(value) ? Result.succeed(value) : problem(name, "must be a date, YYYY-MM-DD")
    case "uuid":
      return isUuid(value) ? Result.succeed(value.toLowerCase()) : problem(name, "must be a UUID")
    case "choice":
      return kind.values.includes(value) ? Result.succeed(value) : problem(name, `must be one of ${kind.values.join(", ")}`)
    case "days": {
      const parts = value.split(",").map((part) => part.trim())
      if (parts.length > MAX_BUCKETS || !parts.every((part) => /^[0-9]{1,4}$/.test(part))) {
        return problem(name, `must be up to ${MAX_BUCKETS} whole numbers of days, comma-separated, e.g. 30,60,90`)
      }
      const days = parts.map(Number)
      if (days.some((day, index) => day < 1 || day > MAX_BUCKET_DAYS || (index > 0 && day <= days[index - 1]))) {
        return problem(name, `must rise, each from 1 to ${MAX_BUCKET_DAYS} days`)
      }
      return Result.succeed(days.join(","))
    }
  }
}

/**
 * The query string read against a report's parameters: each at most once and of its kind; a
 * name the report does not take is refused, naming the ones it does (a typo never goes unnoticed).
 */
export const readParameters = <P extends ReportParameters>(declared: P, params: QueryParams): Result.Result<ParameterValues<P>, InvalidRequest> => {
  const values: Record<string, string> = {}
  for (const [name, value] of params) {
    const parameter = Object.hasOwn(declared, name) ? declared[name] : undefined
    if (!parameter) return problem(name, `is not a parameter of this report; it takes ${Object.keys(declared).join(", ")}`, "UNKNOWN_PARAMETER")
    if (Object.hasOwn(values, name)) return problem(name, "is sent more than once")
    const read = checked(name, parameter.kind, value)
    if (Result.isFailure(read)) return Result.fail(read.failure)
    values[name] = read.success
  }
  return Result.succeed(values)
}

/** `from` and `to`, as every report over a period takes them (`readPeriod` reads them). */
export const PERIOD_PARAMETERS = {
  from: { kind: { type: "date" }, description: "First day (default: the tenant's today)" },
  to: { kind: { type: "date" }, description: "Last day, at most five years after from (default: the tenant's today)" }
} as const satisfies ReportParameters

/** Longest period a report covers: five years (1,827 days with leap days). */
export const MAX_PERIOD_DAYS = 1827

/** Whole days from `from` to `to` (both `YYYY-MM-DD`). */
export const daysBetween = (from: string, to: string): number =>
  Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000)

/** `from` and `to` (each defaulting to today): `from` not after `to`, and at most five years apart. */
export const readPeriod = (values: { readonly from?: string; readonly to?: string }, today: string): Result.Result<{ readonly from: string; readonly to: string }, InvalidRequest> => {
  const from = values.from ?? (values.to !== undefined && values.to < today ? values.to : today)
  const to = values.to ?? (from > today ? from : today)
  if (from > to) return problem("from", `is after to (${to})`)
  if (daysBetween(from, to) >= MAX_PERIOD_DAYS) return problem("to", "is more than five years after from", "PERIOD_TOO_LONG")
  return Result.succeed({ from, to })
}

/** The 400 of a report with more groups than it answers, naming the parameter that narrows it. */
export const tooManyGroups = (name: string, limit: number, what: string) =>
  invalid(`Invalid ${name}: the report has more than ${limit.toLocaleString("en-US")} ${what}; narrow it with ${name}`, "TOO_MANY_GROUPS", {
    [name]: [`gives more than ${limit} ${what}`]
  })

/** Most groups (rows) a report answers. */
export const MAX_GROUPS = 10_000
