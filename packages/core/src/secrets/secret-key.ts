import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
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

/**
 * Where the key that seals stored secrets comes from: `ERP_SECRET_KEY` (required with
 * PostgreSQL, where several hosts must share it); else, for the embedded store, a key
 * file generated beside the data; an in-memory store gets a key for its lifetime.
 * `ERP_SECRET_KEY_PREVIOUS` is the key being rotated away from.
 */
export const resolveSecretKeys = (location: StoreLocation, env: Readonly<Record<string, string | undefined>> = process.env) =>
  Effect.try({
    try: (): SecretKeys => {
      const previous = env.ERP_SECRET_KEY_PREVIOUS?.trim() ? fromSetting("ERP_SECRET_KEY_PREVIOUS", env.ERP_SECRET_KEY_PREVIOUS) : undefined
      if (env.ERP_SECRET_KEY?.trim()) return { current: fromSetting("ERP_SECRET_KEY", env.ERP_SECRET_KEY), previous, source: "ERP_SECRET_KEY" }
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
  })

/** The `SecretBox` for a store location (see `resolveSecretKeys`). */
export const layerSecretBox = (location: StoreLocation, env: Readonly<Record<string, string | undefined>> = process.env): Layer.Layer<SecretBox, StartupError> =>
  Layer.unwrapEffect(Effect.map(resolveSecretKeys(location, env), layerSecretBoxWith))
