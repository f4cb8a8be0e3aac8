import { type AnyResource, can, MatchSuggestions, type ResourceAction } from "@erp/core"
import { Effect, Result, Schema } from "effect"
import { HttpRouter } from "effect/http"
import { html } from "../html.js"
import { type Kit, seeOther } from "./kit.js"
import { csrfField, type PanelContext } from "./layout.js"
import { recordLabel, showValue } from "./display.js"

type Row = Readonly<Record<string, unknown>>

/** Lines shown unreconciled, and reconciled (for undo), on one account's screen. */
const OPEN_LINES = 20
const DONE_LINES = 10
/** Suggestions shown per line. */
const SHOWN = 3

const decodeSuggestions = Schema.decodeUnknownOption(MatchSuggestions)

/**
 * The reconciliation screens: an account's lines not yet reconciled with the documents each may
 * pay (accept one), the ones reconciled (undo), and the automatic run. Every step is the
 * declared action the API and MCP run.
 */
export const makeReconciliation = (kit: Kit) => {
  const named = (name: string): AnyResource => kit.registry.find((resource) => resource.name === name)!
  const accounts = named("financial-accounts")
  const lines = named("financial-transactions")
  const actionOf = (resource: AnyResource, name: string): ResourceAction => resource.actions!.find((action) => action.name === name)!
  const allowed = (ctx: PanelContext) => can(ctx.principal, lines.permission, "read")
  const title = (ctx: PanelContext) => ctx.t("Bank reconciliation")
  const refuse = (ctx: PanelContext, error: { readonly _tag: string; readonly message: string }) => kit.failure(ctx, title(ctx), error)
  const forbidden = (ctx: PanelContext) => kit.refusal(ctx, title(ctx), ctx.t("Not found"), 404)
  const back = (ctx: PanelContext, account: string, done?: string) => seeOther(`${ctx.root}/reconciliation/${account}${done ? `?done=${done}` : ""}`)

  const list = kit.signedIn((ctx) =>
    Effect.gen(function* () {
      if (!allowed(ctx)) return forbidden(ctx)
      const page = yield* kit.engine.list(accounts, ctx.principal, [["limit", "100"]]).pipe(Effect.orDie)
      return kit.page(ctx, {
        title: title(ctx),
        current: "reconciliation",
        body: html`<h1>${title(ctx)}</h1>
          ${page.data.length === 0
            ? html`<p class="muted">${ctx.t("No records.")}</p>`
            : html`<ul class="reports" id="accounts">${page.data.map((account) => html`
              <li><a href="${ctx.root}/reconciliation/${String(account.id)}"><strong>${recordLabel(account)}</strong></a>
              <p class="muted small">${showValue(ctx, account.current_balance)}</p></li>`)}</ul>`}`
      })
    }))

  const linesOf = (ctx: PanelContext, account: string, reconciled: boolean, limit: number) =>
    kit.engine.list(lines, ctx.principal, [["account_id", account], ["is_reconciled", String(reconciled)], ["limit", String(limit)]]).pipe(Effect.orDie)

  const suggestionsOf = (ctx: PanelContext, line: Row) =>
    kit.engine.action(lines, actionOf(lines, "match_suggestions"), ctx.principal, String(line.id), {}, undefined).pipe(
      Effect.map((answer) => decodeSuggestions(answer)),
      Effect.map((decoded) => (decoded._tag === "Some" ? decoded.value.data.slice(0, SHOWN) : [])),
      Effect.orElseSucceed(() => [])
    )

  const show = kit.signedIn((ctx, request) =>
    Effect.gen(function* () {
      if (!allowed(ctx)) return forbidden(ctx)
      const params = yield* HttpRouter.params
      const account = yield* kit.engine.get(accounts, ctx.principal, params.account ?? "", []).pipe(Effect.result)
      if (Result.isFailure(account)) return refuse(ctx, account.failure)
      const id = String(account.success.id)
      const open = (yield* linesOf(ctx, id, false, OPEN_LINES)).data.filter((line) => line.ignored_at === null)
      const done = yield* linesOf(ctx, id, true, DONE_LINES)
      const suggested = yield* Effect.forEach(open, (line) => Effect.map(suggestionsOf(ctx, line), (suggestions) => ({ line, suggestions })), { concurrency: 4 })
      const writes = can(ctx.principal, lines.permission, "update")
      const notice = new URL(request.url, "http://panel").searchParams.get("done")
      const lineCell = (line: Row) => html`<strong>${showValue(ctx, line.name)}</strong>${line.memo ? html`<br><span class="muted small">${String(line.memo)}</span>` : html``}`
      const rows = suggested.map(({ line, suggestions }) => html`
        <tr id="line-${String(line.id)}"><td>${showValue(ctx, line.posted_at)}</td><td>${lineCell(line)}</td><td class="num">${showValue(ctx, line.amount)}</td>
        <td>${suggestions.length === 0
          ? html`<span class="muted">${ctx.t("No suggestion")}</span>`
          : html`<ol class="suggestions">${suggestions.map((suggestion, index) => html`
            <li><span class="score">${suggestion.score.toFixed(2)}</span>
            ${suggestion.documents.map((document) => html`<span class="document">${document.party_name ?? ""} · ${ctx.t("due")} ${document.due_date} · ${document.open_amount}</span>`)}
            <span class="reasons muted small">${suggestion.reasons.join(", ")}</span>
            ${writes && html`<form method="post" action="${ctx.root}/reconciliation/${id}/lines/${String(line.id)}/reconcile">${csrfField(ctx)}
              <input type="hidden" name="allocations" value="${JSON.stringify(suggestion.allocations)}">
              <button class="secondary" type="submit" aria-label="${ctx.t("Accept")} ${index + 1}: ${String(line.name ?? "")}">${ctx.t("Accept")}</button></form>`}</li>`)}</ol>`}</td></tr>`)
      const doneRows = done.data.map((line) => html`
        <tr><td>${showValue(ctx, line.posted_at)}</td><td>${lineCell(line)}</td><td class="num">${showValue(ctx, line.amount)}</td>
        <td>${writes && html`<form method="post" action="${ctx.root}/reconciliation/${id}/lines/${String(line.id)}/unreconcile">${csrfField(ctx)}
          <button class="secondary" type="submit" aria-label="${ctx.t("Undo")}: ${String(line.name ?? "")}">${ctx.t("Undo")}</button></form>`}</td></tr>`)
      const head = html`<thead><tr><th>${ctx.t("Date")}</th><th>${ctx.t("Line")}</th><th>${ctx.t("Amount")}</th><th></th></tr></thead>`
      return kit.page(ctx, {
        title: `${title(ctx)}: ${recordLabel(account.success)}`,
        current: "reconciliation",
        body: html`<h1>${title(ctx)}: ${recordLabel(account.success)}</h1>
          ${notice && html`<p class="notice" role="status" id="reconciliation-notice">${ctx.t("Done")}: ${notice}</p>`}
          ${writes && html`<form method="post" action="${ctx.root}/reconciliation/${id}/auto" class="card">${csrfField(ctx)}
            <p class="muted small">${actionOf(accounts, "auto_reconcile").description}</p>
            <div class="form-actions"><button class="primary" type="submit">${ctx.t("Reconcile automatically")}</button></div></form>`}
          <section class="card"><h2>${ctx.t("Not reconciled")}</h2>
          ${rows.length === 0 ? html`<p class="muted">${ctx.t("No records.")}</p>` : html`<div class="table-wrap"><table class="stack" id="open-lines">${head}<tbody>${rows}</tbody></table></div>`}</section>
          <section class="card"><h2>${ctx.t("Reconciled")}</h2>
          ${doneRows.length === 0 ? html`<p class="muted">${ctx.t("No records.")}</p>` : html`<div class="table-wrap"><table class="stack" id="done-lines">${head}<tbody>${doneRows}</tbody></table></div>`}</section>`
      })
    }))

  /** Runs one of the line's or the account's actions and comes back to the account's screen. */
  const act = (resource: AnyResource, name: string, target: (params: Readonly<Record<string, string | undefined>>) => string, body: (form: Readonly<Record<string, string | undefined>>) => Result.Result<unknown, string>) =>
    kit.posted((ctx, form) =>
      Effect.gen(function* () {
        if (!allowed(ctx)) return forbidden(ctx)
        const params = yield* HttpRouter.params
        const input = body(form)
        if (Result.isFailure(input)) return kit.refusal(ctx, title(ctx), input.failure, 400)
        const answer = yield* kit.engine.action(resource, actionOf(resource, name), ctx.principal, target(params), {}, input.success).pipe(Effect.result)
        if (Result.isFailure(answer)) return refuse(ctx, answer.failure)
        return back(ctx, params.account ?? "", name)
      }))

  const allocationsOf = (form: Readonly<Record<string, string | undefined>>): Result.Result<unknown, string> => {
    try {
      return Result.succeed({ allocations: JSON.parse(form.allocations ?? "") })
    } catch {
      return Result.fail("allocations must be the suggestion's list")
    }
  }

  return {
    list,
    show,
    reconcile: act(lines, "reconcile", (params) => params.line ?? "", allocationsOf),
    unreconcile: act(lines, "unreconcile", (params) => params.line ?? "", () => Result.succeed(undefined)),
    auto: act(accounts, "auto_reconcile", (params) => params.account ?? "", () => Result.succeed({}))
  }
}
