import { allReports, type AnyReport, parameterJsonSchema, REPORTS_PERMISSION } from "@erp/core"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Authentication } from "./authentication.js"
import { type ApiErrorSchema, BadRequest, Forbidden, SERVER_ERRORS, TooManyRequests } from "./errors.js"

/** A report can be refused for its parameters (400), the permission (403) or the caller's limits (429). */
const REPORT_ERRORS: ReadonlyArray<ApiErrorSchema> = [BadRequest, Forbidden, TooManyRequests, ...SERVER_ERRORS]

/** `GET /reports/<name>`: the report's parameters in the query, its answer as JSON or, with `Accept: text/csv`, CSV. */
const reportEndpoint = (report: AnyReport) =>
  HttpApiEndpoint.get(report.name, `/reports/${report.name}`, { success: report.answer, error: REPORT_ERRORS })
    .annotate(OpenApi.Summary, report.title)
    .annotate(OpenApi.Description, `${report.description}\n\nNeeds \`${REPORTS_PERMISSION}:read\`. Send \`Accept: text/csv\` for the same figures as CSV.`)
    .annotate(OpenApi.Transform, (operation) => ({
      ...operation,
      parameters: Object.entries(report.parameters).map(([name, parameter]) => ({
        name,
        in: "query",
        required: false,
        description: parameter.description,
        schema: parameterJsonSchema(parameter.kind)
      })),
      responses: withCsv(operation.responses)
    }))

/** The 200 answer offered as CSV too. */
const withCsv = (responses: unknown) => {
  if (typeof responses !== "object" || responses === null || !("200" in responses)) return responses
  const ok = responses["200"]
  if (typeof ok !== "object" || ok === null || !("content" in ok) || typeof ok.content !== "object") return responses
  return { ...responses, "200": { ...ok, content: { ...ok.content, "text/csv": { schema: { type: "string" } } } } }
}

/** Every report, behind `Authentication` like the resources. */
const reportsGroup = (reports: ReadonlyArray<AnyReport>) => {
  const [first, ...rest] = reports.map(reportEndpoint)
  return HttpApiGroup.make("reports")
    .add(first, ...rest)
    .middleware(Authentication)
    .annotate(OpenApi.Description, "Summaries over the tenant's records: aging, cash flow, income statement, sales. Needs `reports:read`.")
}

/** The reports' group: made once, so the document and the handlers' routes are the same endpoints. */
export const ReportsGroup = reportsGroup(allReports)
