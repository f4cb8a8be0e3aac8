import { attributes, html } from "../html.js"
import type { PanelContext } from "./layout.js"

/** Field name to the reason it was refused (English; translated when shown). */
export type FieldProblems = Readonly<Record<string, string>>

const errorId = (name: string) => `${name.replace(/[^A-Za-z0-9_-]/g, "_")}-error`

/** `aria-invalid` and the error's id on a refused field, so a screen reader reads the reason with it. */
export const invalidAttributes = (problems: FieldProblems, name: string, hintId?: string) => {
  const described = [...(hintId ? [hintId] : []), ...(problems[name] ? [errorId(name)] : [])]
  return attributes({ "aria-invalid": problems[name] ? "true" : undefined, "aria-describedby": described.length ? described.join(" ") : undefined })
}

/** The reason next to the field. */
export const fieldError = (ctx: Pick<PanelContext, "t">, problems: FieldProblems, name: string) =>
  problems[name] ? html`<p class="field-error" id="${errorId(name)}">${ctx.t(problems[name])}</p>` : null

/** The summary above a refused form. */
export const formProblem = (ctx: Pick<PanelContext, "t">, problems: FieldProblems) =>
  Object.keys(problems).length > 0 && html`<p class="error" role="alert">${ctx.t("Something is wrong with the form: see the fields marked below.")}</p>`
