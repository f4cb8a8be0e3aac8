import { type AnyResource, type FieldErrors } from "@erp/core"
import { Schema } from "effect"
import { fieldError, type FieldProblems, invalidAttributes } from "./forms.js"
import { attributes, html, type Html } from "../html.js"
import type { PanelContext } from "./layout.js"
import type { Form } from "./kit.js"

type JsonSchema = Readonly<Record<string, unknown>>

/** How a field is typed in the panel, read from the declaration's input schema (its JSON Schema). */
export type InputKind =
  | { readonly kind: "text"; readonly long: boolean }
  | { readonly kind: "number"; readonly integer: boolean }
  | { readonly kind: "boolean" }
  | { readonly kind: "choice"; readonly options: ReadonlyArray<string> }
  | { readonly kind: "lines" }
  | { readonly kind: "json" }

export interface FormField {
  readonly name: string
  readonly required: boolean
  readonly nullable: boolean
  readonly input: InputKind
  readonly description: string | undefined
}

const resolve = (defs: Readonly<Record<string, JsonSchema>>, schema: JsonSchema): JsonSchema => {
  const ref = schema.$ref
  if (typeof ref === "string" && ref.startsWith("#/$defs/")) {
    const { $ref: _ref, ...rest } = schema
    return { ...resolve(defs, defs[ref.slice("#/$defs/".length)] ?? {}), ...rest }
  }
  return schema
}

const kindOf = (schema: JsonSchema): InputKind => {
  if (Array.isArray(schema.enum)) return { kind: "choice", options: schema.enum.map(String) }
  switch (schema.type) {
    case "string":
      return { kind: "text", long: typeof schema.maxLength === "number" && schema.maxLength > 500 && schema.format === undefined && schema.pattern === undefined }
    case "integer":
      return { kind: "number", integer: true }
    case "number":
      return { kind: "number", integer: false }
    case "boolean":
      return { kind: "boolean" }
    case "array": {
      const items = (schema.items ?? {}) as JsonSchema
      return items.type === "string" && !Array.isArray(items.enum) ? { kind: "lines" } : { kind: "json" }
    }
    default:
      return { kind: "json" }
  }
}

/** The fields of a create or update body, derived from the declaration: one generic form for every resource. */
export const formFields = (input: Schema.Top | undefined): ReadonlyArray<FormField> => {
  if (!input) return []
  const document = Schema.toJsonSchemaDocument(input)
  const defs: Readonly<Record<string, JsonSchema>> = document.definitions
  const root = resolve(defs, document.schema)
  const properties = (root.properties ?? {}) as Readonly<Record<string, JsonSchema>>
  const required = new Set((root.required ?? []) as ReadonlyArray<string>)
  return Object.entries(properties).map(([name, raw]) => {
    const schema = resolve(defs, raw)
    const branches = Array.isArray(schema.anyOf) ? (schema.anyOf as ReadonlyArray<JsonSchema>).map((branch) => resolve(defs, branch)) : undefined
    const nonNull = branches?.filter((branch) => branch.type !== "null")
    const nullable = branches !== undefined && nonNull!.length < branches.length
    const effective = nonNull && nonNull.length === 1 ? { ...nonNull[0], ...(schema.description ? { description: schema.description } : {}) } : branches ? { type: "json" } : schema
    const description = typeof effective.description === "string" && !effective.description.startsWith("a string") && !effective.description.startsWith("an ")
      ? effective.description
      : undefined
    return { name, required: required.has(name), nullable, input: kindOf(effective), description }
  })
}

/** A field's name for people: `sale_price` reads "Sale price". */
export const fieldLabel = (name: string) => {
  const text = name.replace(/_/g, " ")
  return text[0].toUpperCase() + text.slice(1)
}

/** A stored value as the form shows it. */
export const formValue = (field: FormField, value: unknown): string => {
  if (value === null || value === undefined) return ""
  switch (field.input.kind) {
    case "lines":
      return Array.isArray(value) ? value.join("\n") : String(value)
    case "json":
      return JSON.stringify(value, null, 2)
    default:
      return String(value)
  }
}

/**
 * The body the engine receives from a posted form: typed from the field kinds. On update an
 * emptied field is sent as null (cleared) when it held a value; other empty fields are left out.
 */
export const bodyFromForm = (fields: ReadonlyArray<FormField>, form: Form, current?: Readonly<Record<string, unknown>>) => {
  const body: Record<string, unknown> = {}
  const problems: Record<string, string> = {}
  for (const field of fields) {
    const text = form[`f.${field.name}`]
    if (text === undefined) continue
    const trimmed = text.trim()
    if (trimmed === "") {
      if (current && field.nullable && current[field.name] !== null && current[field.name] !== undefined) body[field.name] = null
      continue
    }
    switch (field.input.kind) {
      case "number": {
        const number = Number(trimmed)
        if (!Number.isFinite(number) || (field.input.integer && !Number.isInteger(number))) problems[field.name] = field.input.integer ? "must be a whole number" : "must be a number"
        else body[field.name] = number
        break
      }
      case "boolean":
        body[field.name] = trimmed === "true"
        break
      case "lines":
        body[field.name] = trimmed.split(/\r?\n/).map((line) => line.trim()).filter(Boolean)
        break
      case "json":
        try {
          body[field.name] = JSON.parse(trimmed)
        } catch {
          problems[field.name] = "must be JSON"
        }
        break
      default:
        body[field.name] = field.input.kind === "text" ? text : trimmed
    }
  }
  return { body, problems: problems as FieldProblems }
}

/** The engine's field errors (dotted paths for nested input) on the form's fields: a nested reason goes to its top field. */
export const problemsFromEngine = (fields: FieldErrors | undefined): FieldProblems => {
  const problems: Record<string, string> = {}
  for (const [path, reasons] of Object.entries(fields ?? {})) {
    const name = path.split(/[.[]/)[0]
    const reason = `${path === name ? "" : `${path}: `}${reasons.join("; ")}`
    problems[name] = problems[name] ? `${problems[name]}; ${reason}` : reason
  }
  return problems
}

/** The form's inputs, each with its label, hint and error. */
export const renderFields = (ctx: PanelContext, fields: ReadonlyArray<FormField>, values: Form, problems: FieldProblems): ReadonlyArray<Html> =>
  fields.map((field) => {
    const id = `f-${field.name}`
    const name = `f.${field.name}`
    const value = values[name] ?? ""
    const hintId = field.description ? `${id}-hint` : undefined
    const named = html`${attributes({ id, name })}${invalidAttributes(problems, field.name, hintId)}`
    const option = (option: string, text = option) => html`<option value="${option}"${attributes({ selected: option === value })}>${text}</option>`
    const control = (): Html => {
      switch (field.input.kind) {
        case "choice":
          return html`<select${named}>${option("", "—")}${field.input.options.map((item) => option(item))}</select>`
        case "boolean":
          return html`<select${named}>${option("", "—")}${option("true")}${option("false")}</select>`
        case "lines":
        case "json":
          return html`<textarea${named} class="mono" spellcheck="false">${value}</textarea>`
        case "number":
          return html`<input type="text" inputmode="decimal"${named} value="${value}">`
        default:
          return field.input.long ? html`<textarea${named}>${value}</textarea>` : html`<input type="text"${named} value="${value}">`
      }
    }
    const hint = [field.description, field.input.kind === "lines" ? ctx.t("One per line.") : field.input.kind === "json" ? ctx.t("JSON") : ""].filter(Boolean).join(" ")
    return html`
      <label for="${id}">${fieldLabel(field.name)}${field.required && " *"}</label>${control()}
      ${hint && html`<p class="hint"${attributes({ id: hintId })}>${hint}</p>`}${fieldError(ctx, problems, field.name)}`
  })

/** Form values (`f.<field>`) from a stored record, for the edit form. */
export const valuesOf = (fields: ReadonlyArray<FormField>, record: Readonly<Record<string, unknown>>): Form =>
  Object.fromEntries(fields.map((field) => [`f.${field.name}`, formValue(field, record[field.name])]))

export const createFields = (resource: AnyResource) => formFields(resource.write?.createInput)
export const updateFields = (resource: AnyResource) => formFields(resource.write?.updateInput)
