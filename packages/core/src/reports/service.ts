import { Context, Effect, Layer } from "effect"
import { authorize, type Principal } from "../auth/principal.js"
import type { DomainError } from "../errors.js"
import type { QueryParams } from "../engine/list-query.js"
import { readParameters } from "./parameters.js"
import { ReportQueries } from "./queries.js"
import { type AnyReport, REPORTS_PERMISSION } from "./report.js"

/**
 * The reports' one use case, for every transport: the caller may read reports (403), its
 * parameters are checked (400 naming the one at fault), then the report runs for its tenant.
 */
export class Reports extends Context.Service<Reports, {
  readonly run: (report: AnyReport, principal: Principal, params: QueryParams) => Effect.Effect<unknown, DomainError>
}>()("erp/core/Reports") {
  static readonly layer = Layer.effect(
    Reports,
    Effect.gen(function* () {
      const queries = yield* ReportQueries
      return Reports.of({
        run: Effect.fn("reports.run")(function* (report: AnyReport, principal: Principal, params: QueryParams) {
          yield* authorize(principal, REPORTS_PERMISSION, "read")
          const values = yield* Effect.fromResult(readParameters(report.parameters, params))
          const today = yield* queries.today(principal.tenantId)
          return yield* report.run({ tenantId: principal.tenantId, today, values }).pipe(Effect.provideService(ReportQueries, queries))
        })
      })
    })
  )
}
