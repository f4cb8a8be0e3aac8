import { Effect, Tracer } from "effect"

/**
 * Counts the round trips a host makes to its store: every statement runs in a span of its own
 * that gets the statement's text as its `db.query.text` attribute (effect/sql names the span after
 * the database, so the attribute is what tells a statement apart), and a transaction
 * (`sql.transaction`) adds its BEGIN and COMMIT.
 */
export const statementCounter = () => {
  const inner = Effect.runSync(Effect.tracer)
  let texts: Array<string> = []
  const tracer = Tracer.make({
    ...(inner.context ? { context: inner.context } : {}),
    span: (options) => {
      const span = inner.span(options)
      if (options.name === "sql.transaction") texts.push("BEGIN", "COMMIT")
      const attribute = span.attribute.bind(span)
      span.attribute = (key, value) => {
        if (key === "db.query.text") texts.push(String(value).replace(/\s+/g, " ").trim())
        attribute(key, value)
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
