import { Config, Effect, Layer, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { type InvalidSetting, loadConfig } from "../config/load.js"
import { secretKeySettings } from "../config/variables.js"
import { StartupError } from "../startup-errors.js"
import type { StoreLocation } from "../store/database.js"
import { generateSecretKeyText, layerSecretBoxWith, parseSecretKey, type SecretBox, type SecretKey, secretKeyOf, type SecretKeys } from "./secret-box.js"

/** The embedded store's key file, beside its `pgdata` folder, when `ERP_SECRET_KEY` is not set. */
export const SECRET_KEY_FILE = "secret.key"

const GENERATE_HINT = "generate one with: openssl rand -base64 32"

const fromSetting = (name: string, text: string): SecretKey => {
  const parsed = parseSecretKey(text)
  if (typeof parsed === "string") throw new StartupError(`${name} ${parsed}`, GENERATE_HINT)
  return parsed
}

/**
 * The file is made with mode 0600 and `wx`: a second process starting at the same moment
 * finds it made and reads it, instead of writing a key of its own over it.
 */
const fromFile = (file: string): SecretKey => {
  try {
    return fromSetting(`the key file ${file}`, fs.readFileSync(file, "utf8"))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
  }
  fs.mkdirSync(path.dirname(file), { recursive: true })
  try {
    fs.writeFileSync(file, `${generateSecretKeyText()}\n`, { mode: 0o600, flag: "wx" })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
  }
  return fromSetting(`the key file ${file}`, fs.readFileSync(file, "utf8"))
}

/** Keys an embedding app gives, winning over `ERP_SECRET_KEY` and `ERP_SECRET_KEY_PREVIOUS`. */
export interface GivenSecretKeys {
  readonly secretKey?: string
  readonly previousSecretKey?: string
}

const configuredKeys = Config.all({ current: secretKeySettings.secretKey.config, previous: secretKeySettings.previousSecretKey.config })

/** A given key, else the configured one; blank is none. */
const keyText = (given: string | undefined, configured: Option.Option<Redacted.Redacted<string>>): string | undefined => {
  const text = given ?? Option.getOrUndefined(Option.map(configured, Redacted.value))
  return text?.trim() ? text : undefined
}

/**
 * Where the key that seals stored secrets comes from: `ERP_SECRET_KEY` (required with
 * PostgreSQL, where several hosts must share it); else, for the embedded store, a key
 * file generated beside the data; an in-memory store gets a key for its lifetime.
 * `ERP_SECRET_KEY_PREVIOUS` is the key being rotated away from. Both are read through the
 * `ConfigProvider` in context; `given` keys win.
 */
export const resolveSecretKeys = (location: StoreLocation, given: GivenSecretKeys = {}) =>
  Effect.flatMap(loadConfig(configuredKeys), (configured) =>
    Effect.try({
      try: (): SecretKeys => {
        const previousText = keyText(given.previousSecretKey, configured.previous)
        const currentText = keyText(given.secretKey, configured.current)
        const previous = previousText ? fromSetting("ERP_SECRET_KEY_PREVIOUS", previousText) : undefined
        if (currentText) return { current: fromSetting("ERP_SECRET_KEY", currentText), previous, source: "ERP_SECRET_KEY" }
        if (location.kind === "postgres") {
          throw new StartupError(
            "ERP_SECRET_KEY is not set: it is required with PostgreSQL, to encrypt the secrets kept in the database",
            `${GENERATE_HINT}, and give every host the same one`
          )
        }
        if (location.dataDir) {
          const file = path.join(location.dataDir, SECRET_KEY_FILE)
          return { current: fromFile(file), previous, source: `the key file ${file}` }
        }
        return { current: secretKeyOf(randomBytes(32)), previous, source: "this in-memory store's key" }
      },
      catch: (error) => error instanceof StartupError ? error : new StartupError(`cannot read or create the secret key: ${String(error)}`, undefined, { cause: error })
    }))

/** The `SecretBox` for a store location (see `resolveSecretKeys`). */
export const layerSecretBox = (location: StoreLocation, given: GivenSecretKeys = {}): Layer.Layer<SecretBox, StartupError | InvalidSetting> =>
  Layer.unwrap(Effect.map(resolveSecretKeys(location, given), layerSecretBoxWith))
