import { allReports, type AnyReport, invalid, parameterJsonSchema, type QueryParams, Reports, REPORTS_PERMISSION } from "@erp/core"
import { Effect } from "effect"
import { outputJsonSchema } from "./json-schema.js"
import type { ToolArguments, ToolDefinition } from "./tool-definition.js"

/** Arguments as the route's query: each a string, none the report does not take (the report names it). */
const queryOf = (args: ToolArguments) => {
  const params: Array<readonly [string, string]> = []
  const wrong: Record<string, Array<string>> = {}
  for (const [name, value] of Object.entries(args)) {
    if (typeof value === "string") params.push([name, value])
    else if (value !== undefined && value !== null) wrong[name] = ["must be a string"]
  }
  return Object.keys(wrong).length > 0
    ? Effect.fail(invalid(`Invalid arguments: ${Object.keys(wrong).join(", ")} must be strings`, "INVALID_ARGUMENTS", wrong))
    : Effect.succeed<QueryParams>(params)
}

/** `report_receivables_aging` …: one tool per report, its arguments the route's parameters, its answer the route's JSON. */
export const reportTool = (report: AnyReport): ToolDefinition => ({
  name: `report_${report.name.replace(/-/g, "_")}`,
  resource: REPORTS_PERMISSION,
  title: report.title,
  description: `${report.description} Every argument is optional. Needs the ${REPORTS_PERMISSION}:read permission.`,
  inputSchema: {
    type: "object",
    properties: Object.fromEntries(Object.entries(report.parameters).map(([name, parameter]) => [name, { ...parameterJsonSchema(parameter.kind), description: parameter.description }])),
    required: [],
    additionalProperties: false
  },
  outputSchema: outputJsonSchema(report.answer),
  annotations: { title: report.title, readOnlyHint: true, openWorldHint: false },
  run: (principal, args) => Effect.flatMap(queryOf(args), (params) => Effect.flatMap(Effect.service(Reports), (reports) => reports.run(report, principal, params)))
})

export const reportTools = (): ReadonlyArray<ToolDefinition> => allReports.map(reportTool)
