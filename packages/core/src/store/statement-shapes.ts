import type * as SqlClient from "effect/sql/SqlClient"
import type * as Statement from "effect/sql/Statement"

/** Stands for the `index`-th value while a shape is compiled (two sets of different lengths); no value a caller sends holds a NUL. */
const marks = (count: number, variant: string) => Array.from({ length: count }, (_, index) => `\u0000erp:${index}:${variant}\u0000`)
const MARKED = /^\u0000erp:(\d+):[ab]+\u0000$/

type Slot = { readonly value: number } | { readonly constant: unknown }

/** The text and where each parameter comes from, or `undefined` when a value left its place (changed, or written into the text). */
const compileMarked = <A extends object>(build: (...values: ReadonlyArray<string>) => Statement.Statement<A>, count: number, variant: string) => {
  const [text, params] = build(...marks(count, variant)).compile()
  const slots = params.map((param): Slot => {
    const marked = typeof param === "string" ? MARKED.exec(param) : null
    return marked ? { value: Number(marked[1]) } : { constant: param }
  })
  const leaked = text.includes("\u0000") || slots.some((slot) => "constant" in slot && typeof slot.constant === "string" && slot.constant.includes("\u0000"))
  return leaked ? undefined : { text, slots }
}

const sameSlots = (one: ReadonlyArray<Slot>, other: ReadonlyArray<Slot>) =>
  one.length === other.length && one.every((slot, index) => {
    const that = other[index]
    return "value" in slot ? "value" in that && that.value === slot.value : "constant" in that && that.constant === slot.constant
  })

/**
 * A statement whose text its shape alone decides (a read by id: the resource and its options,
 * the values aside), compiled on its first run; later runs place their values in the kept text.
 * Building and compiling the fragments of a record's statement would otherwise run on every read
 * by id, and the kept text is the same string each run, so the driver's lookups by text
 * (its prepared statement's name) do not hash a few kilobytes again.
 *
 * The build must not choose its text by its values. It is compiled twice, with stand-ins of
 * different lengths: a build whose text or parameters differ between the two, that changes a
 * value or writes one into the text, is built and compiled each run.
 */
export const statementShape = <A extends object>(sql: SqlClient.SqlClient, build: (...values: ReadonlyArray<string>) => Statement.Statement<A>) => {
  let compiled: { readonly text: string; readonly slots: ReadonlyArray<Slot> } | "rebuild" | undefined
  return (...values: ReadonlyArray<string>): Statement.Statement<A> => {
    if (compiled === undefined) {
      const one = compileMarked(build, values.length, "a")
      const other = compileMarked(build, values.length, "bbbbbbbb")
      compiled = one && other && one.text === other.text && sameSlots(one.slots, other.slots) ? one : "rebuild"
    }
    if (compiled === "rebuild") return build(...values)
    return sql.unsafe<A>(compiled.text, compiled.slots.map((slot) => ("value" in slot ? values[slot.value] : slot.constant)))
  }
}
