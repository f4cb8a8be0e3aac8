import { Context, Data, Effect, Layer } from "effect"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"

/**
 * A sealed value: `erpsb1.<key id>.<iv>.<ciphertext>.<tag>`, the last three base64url.
 * AES-256-GCM; the key id (the first 8 bytes of the key's SHA-256, in hex) says which key
 * sealed it, so a rotation can tell old values from new ones and a wrong key is named,
 * not guessed. The version prefix lets a later format sit beside this one.
 */
const VERSION = "erpsb1"
const SEALED = /^erpsb1\.([0-9a-f]{16})\.([A-Za-z0-9_-]{16})\.([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]{22})$/

export const SECRET_KEY_BYTES = 32

/** A 32-byte key and the id that names it in sealed values (a hash: it reveals nothing of the key). */
export interface SecretKey {
  readonly id: string
  readonly bytes: Buffer
}

export const secretKeyOf = (bytes: Buffer): SecretKey => ({
  id: createHash("sha256").update("erp secret key id\0").update(bytes).digest("hex").slice(0, 16),
  bytes
})

/** A key written as 64 hex digits or as base64 (standard or url-safe) of 32 bytes; a message when it is neither. */
export const parseSecretKey = (text: string): SecretKey | string => {
  const trimmed = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return secretKeyOf(Buffer.from(trimmed, "hex"))
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed.replace(/-/g, "+").replace(/_/g, "/"), "base64")
    if (bytes.length === SECRET_KEY_BYTES) return secretKeyOf(bytes)
    return `must be ${SECRET_KEY_BYTES} bytes (64 hex digits or 44 base64 characters); it decodes to ${bytes.length} bytes`
  }
  return `must be ${SECRET_KEY_BYTES} bytes written as 64 hex digits or base64`
}

export const generateSecretKeyText = (): string => randomBytes(SECRET_KEY_BYTES).toString("base64")

/** A sealed value that cannot be opened: sealed with a key we do not hold, or altered. */
export class SecretUnreadable extends Data.TaggedError("SecretUnreadable")<{
  readonly message: string
  /** The key id the value names, when it names one. */
  readonly keyId: string | undefined
}> {}

export const isSealed = (value: string): boolean => SEALED.test(value)

/** The key id a sealed value names, if it is one. */
export const sealedKeyId = (value: string): string | undefined => SEALED.exec(value)?.[1]

/**
 * Seals secrets we must read back (signing private keys, the cursor HMAC key, webhook
 * secrets): AES-256-GCM under `current`; opens values sealed under `current` or
 * `previous` (during a rotation). `context` is bound as associated data, so a sealed
 * value copied into another row or column does not open there.
 */
export class SecretBox extends Context.Service<SecretBox, {
  readonly currentKeyId: string
  readonly seal: (plain: string, context: string) => string
  readonly open: (sealed: string, context: string) => Effect.Effect<string, SecretUnreadable>
  /** Whether the value is sealed under the current key (else it needs sealing again). */
  readonly isCurrent: (value: string) => boolean
}>()("erp/core/SecretBox") {}

export interface SecretKeys {
  readonly current: SecretKey
  readonly previous?: SecretKey | undefined
  /** Where the current key came from, to name it in errors ("ERP_SECRET_KEY", "the key file …"). */
  readonly source: string
}

export const makeSecretBox = (keys: SecretKeys): SecretBox["Service"] => {
  const byId = new Map<string, SecretKey>([[keys.current.id, keys.current]])
  if (keys.previous) byId.set(keys.previous.id, keys.previous)

  const seal = (plain: string, context: string) => {
    const iv = randomBytes(12)
    const cipher = createCipheriv("aes-256-gcm", keys.current.bytes, iv)
    cipher.setAAD(Buffer.from(context, "utf8"))
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
    return [VERSION, keys.current.id, iv.toString("base64url"), body.toString("base64url"), cipher.getAuthTag().toString("base64url")].join(".")
  }

  const open = (sealed: string, context: string) =>
    Effect.suspend(() => {
      const parts = SEALED.exec(sealed)
      if (!parts) return Effect.fail(new SecretUnreadable({ message: "the stored value is not a sealed secret", keyId: undefined }))
      const [, keyId, iv, body, tag] = parts
      const key = byId.get(keyId)
      if (!key) {
        return Effect.fail(new SecretUnreadable({
          message: `sealed with key ${keyId}, but ${keys.source} is key ${keys.current.id}${keys.previous ? ` and ERP_SECRET_KEY_PREVIOUS is key ${keys.previous.id}` : ""}`,
          keyId
        }))
      }
      try {
        const decipher = createDecipheriv("aes-256-gcm", key.bytes, Buffer.from(iv, "base64url"))
        decipher.setAAD(Buffer.from(context, "utf8"))
        decipher.setAuthTag(Buffer.from(tag, "base64url"))
        return Effect.succeed(Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8"))
      } catch {
        return Effect.fail(new SecretUnreadable({ message: `a stored secret sealed with key ${keyId} does not open (altered, or sealed for another place)`, keyId }))
      }
    })

  return SecretBox.of({
    currentKeyId: keys.current.id,
    seal,
    open,
    isCurrent: (value) => sealedKeyId(value) === keys.current.id
  })
}

export const layerSecretBoxWith = (keys: SecretKeys): Layer.Layer<SecretBox> => Layer.succeed(SecretBox, makeSecretBox(keys))
