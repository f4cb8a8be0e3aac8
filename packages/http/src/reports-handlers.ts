import { allReports, type AnyReport, CurrentPrincipal, type Principal, Reports, TenantBusy, TenantGate, toCsv } from "@erp/core"
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, type HttpApiEndpoint } from "effect/http-api"
import { apiRequestOf } from "./body.js"
import { tenantBusy, toApiError } from "./errors.js"
import { queryParams } from "./query-params.js"
import { ReportsGroup } from "./reports-api.js"
import { prefers } from "./accept.js"

const api = HttpApi.make("erp").add(ReportsGroup)
type ReportRoute = HttpApiEndpoint.Handler<(typeof ReportsGroup)["endpoints"][string], never, CurrentPrincipal>

/** The reports' handlers: each runs its report for the caller, in its tenant's turn, and answers JSON or CSV. */
export const reportsHandlers = HttpApiBuilder.group(api, "reports", (handlers) =>
  Effect.gen(function* () {
    const reports = yield* Reports
    const gate = yield* TenantGate
    const run = (report: AnyReport, caller: Principal, accept: string | undefined, url: string) =>
      gate.run(caller.tenantId, reports.run(report, caller, queryParams({ url }))).pipe(
        Effect.mapError((error) => (error instanceof TenantBusy ? tenantBusy(error) : toApiError(error))),
        Effect.map((answer) =>
          prefers(accept, "text/csv")
            ? HttpServerResponse.text(toCsv(report.table(answer)), {
              contentType: "text/csv; charset=utf-8",
              headers: { "content-disposition": `attachment; filename="${report.name}.csv"` }
            })
            : HttpServerResponse.jsonUnsafe(answer))
      )
    const routes: { [name: string]: ReportRoute } = {}
    for (const report of allReports) {
      routes[report.name] = ({ request }) =>
        Effect.flatMap(Effect.service(CurrentPrincipal), (caller) => {
          const { headers, url } = apiRequestOf(request)
          return run(report, caller, headers.accept, url)
        })
    }
    return handlers.handleAll(routes)
  }))
