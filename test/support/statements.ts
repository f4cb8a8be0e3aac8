import { Effect, Tracer } from "effect"

/**
 * Counts the round trips a host makes to its store: every statement is an `sql.execute` span
 * (@effect/sql opens one per statement), and a transaction adds its BEGIN and COMMIT.
 */
export const statementCounter = () => {
  const inner = Effect.runSync(Effect.tracer)
  let texts: Array<string> = []
  const tracer = Tracer.make({
    context: inner.context,
    span: (...args) => {
      const span = inner.span(...args)
      const [name] = args
      if (name === "sql.transaction") texts.push("BEGIN", "COMMIT")
      if (name === "sql.execute") {
        const index = texts.push("?") - 1
        const attribute = span.attribute.bind(span)
        span.attribute = (key, value) => {
          if (key === "db.query.text") texts[index] = String(value).replace(/\s+/g, " ").trim()
          attribute(key, value)
        }
      }
      return span
    }
  })
  return {
    tracer,
    /** The statements since the last call, in order. */
    take: (): ReadonlyArray<string> => {
      const taken = texts
      texts = []
      return taken
    }
  }
}
