import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"

/** Stands for the `index`-th value while a shape is compiled; no value a caller sends holds a NUL. */
const mark = (index: number) => `\u0000erp:${index}\u0000`
const MARKED = /^\u0000erp:(\d+)\u0000$/

/**
 * A statement whose text its shape alone decides (a read by id: the resource and its options,
 * the values aside), compiled on its first run; later runs place their values in the kept text.
 * Building and compiling the fragments of a record's statement was about a tenth of a read by
 * id's CPU, and the kept text is the same string each run, so the driver's lookups by text
 * (its prepared statement's name) do not hash a few kilobytes again. A build that changes the
 * values it is given, or writes one into the text, cannot be replayed from positions: it is
 * built and compiled each run, as before.
 */
export const statementShape = <A extends object>(sql: SqlClient.SqlClient, build: (...values: ReadonlyArray<string>) => Statement.Statement<A>) => {
  let compiled: { readonly text: string; readonly slots: ReadonlyArray<{ readonly value: number } | { readonly constant: unknown }> } | "rebuild" | undefined
  return (...values: ReadonlyArray<string>): Statement.Statement<A> => {
    if (compiled === undefined) {
      const [text, params] = build(...values.map((_, index) => mark(index))).compile()
      const slots = params.map((param) => {
        const marked = typeof param === "string" ? MARKED.exec(param) : null
        return marked ? { value: Number(marked[1]) } : { constant: param }
      })
      const leaked = text.includes("\u0000") || slots.some((slot) => "constant" in slot && typeof slot.constant === "string" && slot.constant.includes("\u0000"))
      compiled = leaked ? "rebuild" : { text, slots }
    }
    if (compiled === "rebuild") return build(...values)
    return sql.unsafe<A>(compiled.text, compiled.slots.map((slot) => ("value" in slot ? values[slot.value] : slot.constant)))
  }
}
