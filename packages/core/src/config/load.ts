import { Config, ConfigProvider, Context, Effect, Result, Schema, SchemaIssue } from "effect"

/** A configuration value the host cannot start with: its message is one line naming the setting. */
export class InvalidSetting extends Error {
  readonly _tag = "InvalidSetting"
}

/** A refusal of our own: its message names the variable and what it takes. */
export const refusedSetting = (message: string): Config.ConfigError =>
  new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.InvalidValue({ message })))

const formatIssue = SchemaIssue.makeFormatterDefault()

/** The variable a path names (the parts of a nested one joined as the environment joins them). */
const nameOf = (path: ReadonlyArray<PropertyKey>): string => path.map(String).join("_")

/** Each problem an issue holds, as one line naming its variable. */
const problemsOf = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> => {
  switch (issue._tag) {
    case "Pointer":
      return problemsOf(issue.issue, [...path, ...issue.path])
    case "Composite":
    case "AnyOf":
      return issue.issues.flatMap((each) => problemsOf(each, path))
    case "MissingKey":
      return [`${nameOf(path)} is not set`]
    default: {
      const own = issue._tag === "InvalidValue" ? issue.annotations?.message : undefined
      // Ours name the variable; a message of Effect's own ("Expected …") is given its name.
      const message = (own ?? formatIssue(issue)).replace(/\s+/g, " ")
      const name = nameOf(path)
      return [name === "" || message.startsWith(name) ? message : `${name}: ${message}`]
    }
  }
}

/** A `ConfigError` as one line: every problem found, each naming its variable. */
export const describeConfigError = (error: Config.ConfigError): string => {
  const cause = error.cause
  const problems = Schema.isSchemaError(cause) ? problemsOf(cause.issue, []) : [cause.message.replace(/\s+/g, " ")]
  return [...new Set(problems)].join("; ")
}

/**
 * The values of `configs`, read together: when some are refused, the failure names every one
 * (`Config.all` stops at the first), so a host's start reports every bad setting at once.
 */
export const allSettings = (configs: ReadonlyArray<Config.Config<unknown>>): Config.Config<ReadonlyArray<unknown>> =>
  Config.all(configs.map((config) =>
    config.pipe(
      Config.map((value): Result.Result<unknown, Config.ConfigError> => Result.succeed(value)),
      Config.orElse((error) => Config.succeed(Result.fail(error)))
    )
  )).pipe(
    Config.mapEffect((results) => {
      const refused = results.filter(Result.isFailure).map((result) => describeConfigError(result.failure))
      return refused.length === 0
        ? Effect.succeed(results.map((result) => (Result.isSuccess(result) ? result.success : undefined)))
        : Effect.fail(refusedSetting([...new Set(refused)].join("; ")))
    })
  )

/**
 * Reads a configuration through the `ConfigProvider` in context; a bad value fails as `InvalidSetting`.
 * Without one provided, the environment as it is now: Effect's default provider keeps the copy
 * of the environment it made when first read, and a variable set since then counts.
 */
export const loadConfig = <A>(config: Config.Config<A>): Effect.Effect<A, InvalidSetting> =>
  Effect.withFiber((fiber) => {
    const provided = Context.getOrUndefined(fiber.context, ConfigProvider.ConfigProvider)
    return Effect.mapError(config.parse(provided ?? ConfigProvider.fromEnv()), (error) => new InvalidSetting(describeConfigError(error)))
  })

/**
 * Reads a configuration now, outside any Effect (a command line's defaults, a store location),
 * through `provider` (the environment unless given); throws `InvalidSetting`.
 */
export const loadConfigSync = <A>(config: Config.Config<A>, provider?: ConfigProvider.ConfigProvider): A => {
  const read = Effect.result(loadConfig(config))
  const result = Effect.runSync(provider ? Effect.provideService(read, ConfigProvider.ConfigProvider, provider) : read)
  if (Result.isFailure(result)) throw result.failure
  return result.success
}
