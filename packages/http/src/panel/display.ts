import type { AnyResource, Page } from "@erp/core"
import { html, type Html } from "../html.js"
import { type PanelContext, time } from "./layout.js"

type Row = Readonly<Record<string, unknown>>

const LABEL_FIELDS = ["name", "title", "subject", "number", "code", "email", "url", "description", "type"]

/** The words that name a record in a list: its first naming field, else its id. */
export const recordLabel = (record: Row): string => {
  for (const field of LABEL_FIELDS) {
    const value = record[field]
    if (typeof value === "string" && value.trim() !== "") return value
    if (typeof value === "number") return String(value)
  }
  return String(record.id ?? "")
}

const isTimestamp = (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)

const NOTHING = html`<span class="muted">&mdash;</span>`

/** One answered value as text: times in the user's zone, objects as JSON. */
export const showValue = (ctx: Pick<PanelContext, "locale" | "tenant">, value: unknown): Html => {
  if (value === null || value === undefined) return NOTHING
  if (typeof value === "string") return isTimestamp(value) ? time(ctx, value) : html`${value}`
  if (typeof value === "number" || typeof value === "boolean") return html`${String(value)}`
  if (Array.isArray(value) && value.length > 0 && value.every((item) => item !== null && typeof item === "object" && !Array.isArray(item))) {
    // A child collection (a delivery's attempts, a ticket's messages): one row per child.
    const rows = value as ReadonlyArray<Readonly<Record<string, unknown>>>
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))].filter((name) => name !== "id" && name !== "tenant_id" && !name.endsWith("_id"))
    return html`
      <div class="table-wrap"><table class="children small"><thead><tr>${columns.map((name) => html`<th>${name}</th>`)}</tr></thead><tbody>
      ${rows.map((row) => html`<tr>${columns.map((name) => html`<td>${showValue(ctx, row[name])}</td>`)}</tr>`)}
      </tbody></table></div>`
  }
  if (Array.isArray(value) && value.every((item) => item === null || typeof item !== "object")) {
    return value.length === 0 ? NOTHING : html`${value.join(", ")}`
  }
  // A block of optional keys (a country block) shows only the keys that hold something.
  const shown = Array.isArray(value) ? value : Object.fromEntries(Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== null))
  if (!Array.isArray(shown) && Object.keys(shown).length === 0) return NOTHING
  return html`<pre class="mono small">${JSON.stringify(shown, null, 2)}</pre>`
}

/** Links to the previous and next pages of an engine list: the cursor is the API's own. */
export const pager = (ctx: PanelContext, page: Page, hrefFor: (cursor: string) => string): Html | null => {
  const { previous_cursor: previous, next_cursor: next, has_previous_page: hasPrevious, has_next_page: hasNext } = page.pagination
  if (!(hasPrevious && previous) && !(hasNext && next)) return null
  return html`
    <nav class="pager" aria-label="${ctx.t("Records")}">
    ${hasPrevious && previous && html`<a class="btn secondary" rel="prev" href="${hrefFor(previous)}">&larr; ${ctx.t("Previous page")}</a>`}
    ${hasNext && next && html`<a class="btn secondary" rel="next" href="${hrefFor(next)}">${ctx.t("Next page")} &rarr;</a>`}
    </nav>`
}

/** A URL with its query replaced by `params` (empty values left out). */
export const withQuery = (path: string, params: Readonly<Record<string, string | undefined>>) => {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value) query.set(name, value)
  const text = query.toString()
  return text ? `${path}?${text}` : path
}

/** Resources whose records the panel lists: the tenant's own (no catalogs, no change feed, nothing nested). */
export const tenantResources = (registry: ReadonlyArray<AnyResource>) =>
  registry.filter((resource) => resource.storage !== "catalog" && resource.name !== "events" && !resource.nestedUnder)
