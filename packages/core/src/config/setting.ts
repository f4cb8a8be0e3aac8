import { Config, Effect, Option, Redacted, Result, Schema, SchemaIssue } from "effect"
import { refusedSetting } from "./load.js"

/**
 * How the text of a variable becomes a value: the value, or the one-line message that says what
 * is wrong with it (naming the variable and what it takes). The text arrives trimmed and not blank.
 */
export interface Kind<A> {
  /** The kind of value, as the configuration table names it. */
  readonly type: string
  readonly parse: (text: string, name: string) => Result.Result<A, string>
}

/**
 * One environment variable, declared once: read through the `ConfigProvider` in the Effect
 * context (the environment unless an embedding app provides another), and documented from here.
 */
export interface Setting<out A> {
  readonly name: string
  readonly type: string
  /** The value when the variable is unset or blank, as the configuration table shows it. */
  readonly default: string
  readonly description: string
  readonly config: Config.Config<A>
}

/** Blank values, told apart from refused ones: they count as unset. */
const blanks = new WeakSet<Config.ConfigError>()

/**
 * The variable's text, trimmed. Blank counts as unset, as `DATABASE_URL=` in a compose file or a
 * test's environment means "none", so a default or an option applies (`orWhenBlank`).
 */
const present = (name: string): Config.Config<string> =>
  Config.String(name).pipe(
    Config.mapEffect((text) => {
      const trimmed = text.trim()
      if (trimmed !== "") return Effect.succeed(trimmed)
      const blank = new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Pointer([name], new SchemaIssue.MissingKey(undefined))))
      blanks.add(blank)
      return Effect.fail(blank)
    })
  )

/** `value` for a blank variable, as `Config.withDefault` gives it for an unset one. */
const orWhenBlank = <const B>(value: B) => <A>(config: Config.Config<A>): Config.Config<A | B> =>
  Config.orElse(config, (error) => (blanks.has(error) ? Config.succeed(value) : Config.fail(error.cause)))

const parsed = <A>(name: string, kind: Kind<A>): Config.Config<A> =>
  present(name).pipe(
    Config.mapEffect((text) =>
      Result.match(kind.parse(text, name), {
        onFailure: (message) => Effect.fail(refusedSetting(message)),
        onSuccess: (value) => Effect.succeed(value)
      })
    )
  )

/** A variable with a default, taken when it is unset or blank; `shown` is the default as the table writes it (default: the value as code). */
export const setting = <A>(
  name: string,
  kind: Kind<A>,
  options: { readonly default: A; readonly shown?: string; readonly description: string }
): Setting<A> => ({
  name,
  type: kind.type,
  default: options.shown ?? `\`${String(options.default)}\``,
  description: options.description,
  config: parsed(name, kind).pipe(Config.withDefault(options.default), orWhenBlank(options.default))
})

/** A variable without a value of its own when unset; `shown` says what happens then. */
export const optionalSetting = <A>(
  name: string,
  kind: Kind<A>,
  options: { readonly shown: string; readonly description: string }
): Setting<Option.Option<A>> => ({
  name,
  type: kind.type,
  default: options.shown,
  description: options.description,
  config: Config.option(parsed(name, kind)).pipe(orWhenBlank(Option.none()))
})

/** A secret: read as a `Redacted` (never printed or logged), none when unset. */
export const secretSetting = (
  name: string,
  options: { readonly type: string; readonly shown: string; readonly description: string }
): Setting<Option.Option<Redacted.Redacted<string>>> => ({
  name,
  type: options.type,
  default: options.shown,
  description: options.description,
  config: Config.option(present(name).pipe(Config.map((text) => Redacted.make(text)))).pipe(orWhenBlank(Option.none()))
})

const TRUE = ["true", "1", "yes"]
const FALSE = ["false", "0", "no"]

/** true/false, 1/0 or yes/no, in any case; anything else is refused rather than read as either. */
export const flag: Kind<boolean> = {
  type: "boolean",
  parse: (text, name) => {
    const word = text.toLowerCase()
    if (TRUE.includes(word)) return Result.succeed(true)
    if (FALSE.includes(word)) return Result.succeed(false)
    return Result.fail(`${name} must be true, false, 1, 0, yes or no; got "${text}"`)
  }
}

/** A whole number from `least` up (to `most`, when given). */
export const wholeNumber = (least: number, most?: number): Kind<number> => {
  const range = most === undefined ? `${least} or more` : `from ${least} to ${most}`
  return {
    type: `whole number, ${range}`,
    parse: (text, name) => {
      const value = Number(text)
      return /^\d+$/.test(text) && Number.isSafeInteger(value) && value >= least && (most === undefined || value <= most)
        ? Result.succeed(value)
        : Result.fail(`${name} must be a whole number ${range}; got "${text}"`)
    }
  }
}

export const text: Kind<string> = { type: "text", parse: (value) => Result.succeed(value) }

/** Comma-separated items, each trimmed, empty ones dropped. */
export const list: Kind<ReadonlyArray<string>> = {
  type: "comma-separated list",
  parse: (value) => Result.succeed(value.split(",").map((item) => item.trim()).filter((item) => item !== ""))
}

/** An absolute http(s) URL without query or fragment, answered without its trailing slash. */
export const httpUrl: Kind<string> = {
  type: "http(s) URL",
  parse: (value, name) => {
    const refused = Result.fail(`${name} must be an absolute http(s) URL without query or fragment, such as https://erp.example.com; got "${value}"`)
    if (!URL.canParse(value)) return refused
    const url = new URL(value)
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" || url.hash !== "") return refused
    return Result.succeed(url.toString().replace(/\/+$/, ""))
  }
}

/** A PostgreSQL memory size, as `shared_buffers` takes it. */
export const memorySize: Kind<string> = {
  type: "size (kB, MB or GB)",
  parse: (value, name) =>
    /^[1-9]\d*(kB|MB|GB)$/.test(value) ? Result.succeed(value) : Result.fail(`${name} must be a size such as 32MB (kB, MB or GB); got "${value}"`)
}

/** One of a few words, in any case. */
export const oneOf = <const W extends string>(words: ReadonlyArray<W>): Kind<W> => ({
  type: words.join(" or "),
  parse: (text, name) => {
    const word = words.find((candidate) => candidate === text.toLowerCase())
    return word === undefined ? Result.fail(`${name} must be ${words.join(" or ")}; got "${text}"`) : Result.succeed(word)
  }
})
