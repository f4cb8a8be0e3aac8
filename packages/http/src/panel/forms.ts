import { escapeHtml, type PanelContext } from "./layout.js"

/** Field name to the reason it was refused (English; translated when shown). */
export type FieldProblems = Readonly<Record<string, string>>

const errorId = (name: string) => `${name.replace(/[^A-Za-z0-9_-]/g, "_")}-error`

/** `aria-invalid` and the error's id on a refused field, so a screen reader reads the reason with it. */
export const invalidAttributes = (problems: FieldProblems, name: string, hintId?: string) => {
  const described = [...(hintId ? [hintId] : []), ...(problems[name] ? [errorId(name)] : [])]
  return (problems[name] ? ` aria-invalid="true"` : "") + (described.length ? ` aria-describedby="${described.join(" ")}"` : "")
}

/** The reason next to the field. */
export const fieldError = (ctx: Pick<PanelContext, "t">, problems: FieldProblems, name: string) =>
  problems[name] ? `<p class="field-error" id="${errorId(name)}">${escapeHtml(ctx.t(problems[name]))}</p>` : ""

/** The summary above a refused form. */
export const formProblem = (ctx: Pick<PanelContext, "t">, problems: FieldProblems) =>
  Object.keys(problems).length > 0 ? `<p class="error" role="alert">${escapeHtml(ctx.t("Something is wrong with the form: see the fields marked below."))}</p>` : ""
