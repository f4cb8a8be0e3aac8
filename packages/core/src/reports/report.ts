import type { Effect, Schema } from "effect"
import type { InvalidRequest } from "../errors.js"
import type { ParameterValues, ReportParameters } from "./parameters.js"
import type { ReportQueries } from "./queries.js"

/** A report as a table: what CSV writes and what the panel shows beside a chart. */
export interface ReportTable {
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string | number | null>>
}

/** What a report runs with: the caller's tenant, its today, and the parameters as sent (checked). */
export interface ReportInput<P extends ReportParameters> {
  readonly tenantId: string
  readonly today: string
  readonly values: ParameterValues<P>
}

/**
 * One report, declared once: its route (`GET /reports/<name>`), MCP tool, OpenAPI operation,
 * panel screen and CSV derive from this. Methods, so a declaration of any answer is an `AnyReport`.
 */
export interface ReportDefinition<P extends ReportParameters = ReportParameters, A = unknown> {
  /** Path segment, e.g. `receivables-aging`. */
  readonly name: string
  readonly title: string
  readonly description: string
  readonly parameters: P
  /** The answer's schema: the endpoint's success, the tool's output schema. */
  readonly answer: Schema.Codec<A, unknown>
  run(input: ReportInput<P>): Effect.Effect<A, InvalidRequest, ReportQueries>
  table(answer: A): ReportTable
}

export type AnyReport = ReportDefinition

/** Every report needs this permission's `read`: a resource code of its own. */
export const REPORTS_PERMISSION = "reports"

export const defineReport = <const P extends ReportParameters, A>(definition: ReportDefinition<P, A>): ReportDefinition<P, A> => definition
