import { addDays, allReports, type AnyReport, can, cashFlow, type DomainError, payablesAging, type Principal, receivablesAging, type ReportTable, Reports, REPORTS_PERMISSION, todayIn, toCsv } from "@erp/core"
import BigNumber from "bignumber.js"
import { Effect, Option, Result, Schema } from "effect"
import { HttpRouter, type HttpServerRequest, HttpServerResponse } from "effect/http"
import { html, type Html } from "../html.js"
import { flowChart, stackedChart } from "./charts.js"
import { type Kit, queryOf } from "./kit.js"
import { type PanelContext, PANEL_HEADERS } from "./layout.js"

/** Whether the signed-in principal may read reports (the panel shows them only then). */
export const canReadReports = (principal: Principal) => can(principal, REPORTS_PERMISSION, "read")

/** A report's table as HTML: a header row, then the rows; a wide one scrolls in its own region, which the keyboard reaches. */
export const reportTable = (table: ReportTable, id: string, label: string): Html => html`
  <div class="table-wrap" tabindex="0" role="region" aria-label="${label}"><table class="report" id="${id}">
    <thead><tr>${table.columns.map((column) => html`<th>${column}</th>`)}</tr></thead>
    <tbody>${table.rows.map((row) => html`<tr>${row.map((cell) => html`<td>${cell ?? ""}</td>`)}</tr>`)}</tbody>
  </table></div>`

type CashFlowAnswer = typeof cashFlow.answer.Type
/** What the aging chart reads of either aging's answer. */
interface AgingFigures {
  readonly buckets: ReadonlyArray<{ readonly key: string }>
  readonly rows: ReadonlyArray<{ readonly name: string | null; readonly amounts: Readonly<Record<string, string>> }>
}

/** The answers the charts read, decoded by each report's own schema. */
const decodeCashFlow = Schema.decodeUnknownOption(cashFlow.answer)
const decodeAging: Readonly<Record<string, (answer: unknown) => Option.Option<AgingFigures>>> = {
  [receivablesAging.name]: Schema.decodeUnknownOption(receivablesAging.answer),
  [payablesAging.name]: Schema.decodeUnknownOption(payablesAging.answer)
}

/** The cash flow as bars in and out (realized and projected together) and the balance line. */
const cashFlowFigure = (ctx: PanelContext, answer: CashFlowAnswer, id: string, label: string) =>
  flowChart(ctx, answer.periods.map((period) => ({
    start: period.start,
    in: new BigNumber(period.realized_in).plus(period.projected_in).toFixed(6),
    out: new BigNumber(period.realized_out).plus(period.projected_out).toFixed(6),
    balance: period.closing
  })), id, label)

/** Parties drawn apiece in the aging chart; the rest are one "others" series. */
const NAMED_PARTIES = 4

/** The aging as a bar per bucket, stacked by the largest parties (the answer lists them largest first). */
const agingFigure = (ctx: PanelContext, answer: AgingFigures, id: string, label: string) => {
  const named = answer.rows.slice(0, NAMED_PARTIES)
  const others = answer.rows.slice(NAMED_PARTIES)
  const series = [...named.map((row) => row.name ?? ctx.t("No party")), ...(others.length > 0 ? [ctx.t("Others")] : [])]
  const columns = answer.buckets.map((bucket) => ({
    label: bucket.key,
    amounts: [
      ...named.map((row) => row.amounts[bucket.key] ?? "0"),
      ...(others.length > 0 ? [others.reduce((sum, row) => sum.plus(row.amounts[bucket.key] ?? 0), new BigNumber(0)).toFixed(6)] : [])
    ]
  }))
  return stackedChart(columns, series, id, label, ctx.t("Open amounts per bucket of days past due"))
}

/** The chart a report's screen draws above its table, where it has one. */
const figureOf = (ctx: PanelContext, report: AnyReport, answer: unknown, id: string, label: string): Html | undefined => {
  if (report.name === cashFlow.name) return Option.getOrUndefined(Option.map(decodeCashFlow(answer), (decoded) => cashFlowFigure(ctx, decoded, id, label)))
  const aging = decodeAging[report.name]
  if (aging) return Option.getOrUndefined(Option.map(aging(answer), (decoded) => agingFigure(ctx, decoded, id, label)))
  return undefined
}

/** A report's parameters as a GET form, filled with what was sent: each input named as its parameter, its description beside it. */
const filters = (ctx: PanelContext, report: AnyReport, sent: URLSearchParams) => html`
  <form method="get" class="card filters report-filters" action="${ctx.root}/reports/${report.name}" role="search">
    ${Object.entries(report.parameters).map(([name, parameter]) => {
      const value = sent.get(name) ?? ""
      const field = parameter.kind.type === "choice"
        ? html`<select name="${name}" id="p-${name}" aria-describedby="h-${name}"><option value="">${ctx.t("Default")}</option>${parameter.kind.values.map((choice) => html`<option value="${choice}"${choice === value ? html` selected` : html``}>${choice}</option>`)}</select>`
        : html`<input name="${name}" id="p-${name}" type="${parameter.kind.type === "date" ? "date" : "text"}" value="${value}" aria-describedby="h-${name}">`
      return html`<div><label for="p-${name}">${name}</label>${field}<p class="hint" id="h-${name}">${parameter.description}</p></div>`
    })}
    <div class="submit"><button class="primary" type="submit">${ctx.t("Show")}</button></div>
  </form>`

/** The query sent to the screen, as the report's parameters (empty fields left out, as the form sends them). */
const paramsOf = (sent: URLSearchParams): ReadonlyArray<readonly [string, string]> => [...sent.entries()].filter(([, value]) => value !== "")

const refusalOf = (error: DomainError) => ({
  status: error._tag === "Forbidden" ? 403 : error._tag === "InvalidRequest" ? 400 : 422,
  message: error.message
})

export const makeReports = (kit: Kit) => Effect.map(Effect.service(Reports), (reports) => {
  const run = (report: AnyReport, principal: Principal, params: ReadonlyArray<readonly [string, string]>) =>
    Effect.result(reports.run(report, principal, params))

  /** The report the path names (`:report`), or none. */
  const routed = Effect.map(HttpRouter.params, (params) => allReports.find((report) => report.name === params.report))

  const forbidden = (ctx: PanelContext) => kit.refusal(ctx, ctx.t("Reports"), ctx.t("This credential lacks the reports:read permission"), 403)
  const notFound = (ctx: PanelContext) => kit.refusal(ctx, ctx.t("Not found"), ctx.t("No such report."), 404)

  const list = kit.signedIn((ctx) =>
    Effect.succeed(
      canReadReports(ctx.principal)
        ? kit.page(ctx, {
          title: ctx.t("Reports"),
          current: "reports",
          body: html`<h1>${ctx.t("Reports")}</h1><ul class="reports" id="reports">${allReports.map((report) => html`
            <li><a href="${ctx.root}/reports/${report.name}"><strong>${report.title}</strong></a><p class="muted small">${report.description}</p></li>`)}</ul>`
        })
        : forbidden(ctx)
    ))

  const show = kit.signedIn((ctx, request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function* () {
      if (!canReadReports(ctx.principal)) return forbidden(ctx)
      const report = yield* routed
      if (!report) return notFound(ctx)
      const sent = queryOf(request)
      const params = paramsOf(sent)
      const result = yield* run(report, ctx.principal, params)
      if (Result.isFailure(result)) {
        const { status, message } = refusalOf(result.failure)
        if (status === 403) return kit.refusal(ctx, report.title, message, 403)
        const body = html`<h1>${report.title}</h1>${filters(ctx, report, sent)}<p class="error" role="alert" id="report-error">${message}</p>`
        return kit.page(ctx, { title: report.title, current: "reports", body }, status)
      }
      const query = new URLSearchParams()
      for (const [name, value] of params) query.append(name, value)
      const csv = `${ctx.root}/reports/${report.name}.csv${query.size > 0 ? `?${query}` : ""}`
      const body = html`
        <h1>${report.title}</h1>
        <p class="muted">${report.description}</p>
        ${filters(ctx, report, sent)}
        <section class="card" aria-labelledby="result-title"><h2 id="result-title">${ctx.t("Result")}</h2>
          ${figureOf(ctx, report, result.success, "report-chart", report.title)}
          ${reportTable(report.table(result.success), "report-table", report.title)}
          <p><a href="${csv}" id="report-csv">${ctx.t("Download CSV")}</a></p>
        </section>`
      return kit.page(ctx, { title: report.title, current: "reports", body })
    }))

  const csv = kit.signedIn((ctx, request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function* () {
      if (!canReadReports(ctx.principal)) return forbidden(ctx)
      const report = yield* routed
      if (!report) return notFound(ctx)
      const result = yield* run(report, ctx.principal, paramsOf(queryOf(request)))
      if (Result.isFailure(result)) {
        const { status, message } = refusalOf(result.failure)
        return kit.refusal(ctx, report.title, message, status)
      }
      return HttpServerResponse.text(toCsv(report.table(result.success)), {
        contentType: "text/csv; charset=utf-8",
        headers: { ...PANEL_HEADERS, "content-disposition": `attachment; filename="${report.name}.csv"` }
      })
    }))

  /** The overview's two charts, each with its table: the next 90 days' cash flow by week, and the receivables aging. */
  const overviewCards = (ctx: PanelContext): Effect.Effect<Html | undefined> =>
    Effect.gen(function* () {
      if (!canReadReports(ctx.principal)) return undefined
      const today = todayIn(ctx.tenant.time_zone)
      const card = (id: string, title: string, report: AnyReport, params: ReadonlyArray<readonly [string, string]>) =>
        Effect.map(run(report, ctx.principal, params), (result) =>
          Result.isFailure(result)
            ? html``
            : html`
              <section class="card" aria-labelledby="${id}-title"><h2 id="${id}-title"><a href="${ctx.root}/reports/${report.name}">${title}</a></h2>
              ${figureOf(ctx, report, result.success, `${id}-chart`, title)}${reportTable(report.table(result.success), `${id}-table`, title)}</section>`)
      const [flowCard, agingCard] = yield* Effect.all([
        card("cash-flow", ctx.t("Cash flow, next 90 days"), cashFlow, [["from", today], ["to", addDays(today, 90)], ["interval", "week"]]),
        card("aging", ctx.t("Receivables aging"), receivablesAging, [])
      ])
      return html`<div class="grid charts">${flowCard}${agingCard}</div>`
    })

  return { list, show, csv, overviewCards }
})

export type PanelReports = Effect.Success<ReturnType<typeof makeReports>>
