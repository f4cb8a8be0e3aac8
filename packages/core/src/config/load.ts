import { type Config, ConfigError, type ConfigProvider, Effect, Either } from "effect"

/** A configuration value the host cannot start with: its message is one line naming the setting. */
export class InvalidSetting extends Error {
  readonly _tag = "InvalidSetting"
}

/** A `ConfigError` as one line: every problem found, each naming its variable. */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  if (ConfigError.isAnd(error) || ConfigError.isOr(error)) {
    return [...new Set([describeConfigError(error.left), describeConfigError(error.right)])].join("; ")
  }
  const name = error.path.join("_")
  if (ConfigError.isMissingData(error)) return `${name} is not set`
  // Our kinds name the variable; a message of Effect's own ("Expected …") is given its name.
  const message = error.message.replace(/\s+/g, " ")
  return name === "" || message.startsWith(name) ? message : `${name}: ${message}`
}

/** Reads a configuration through the `ConfigProvider` in context; a bad value fails as `InvalidSetting`. */
export const loadConfig = <A>(config: Config.Config<A>): Effect.Effect<A, InvalidSetting> =>
  Effect.mapError(config, (error) => new InvalidSetting(describeConfigError(error)))

/**
 * Reads a configuration now, outside any Effect (a command line's defaults, a store location),
 * through `provider` (the environment unless given); throws `InvalidSetting`.
 */
export const loadConfigSync = <A>(config: Config.Config<A>, provider?: ConfigProvider.ConfigProvider): A => {
  const read = Effect.either(loadConfig(config))
  const result = Effect.runSync(provider ? Effect.withConfigProvider(read, provider) : read)
  if (Either.isLeft(result)) throw result.left
  return result.right
}
