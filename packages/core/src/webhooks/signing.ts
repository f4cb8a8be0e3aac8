import { createHmac, randomBytes } from "node:crypto"

/** Standard Webhooks secrets: `whsec_` and the base64 of the key's bytes. */
export const SECRET_PREFIX = "whsec_"

export const generateWebhookSecret = (): string => SECRET_PREFIX + randomBytes(32).toString("base64")

const keyOf = (secret: string) => Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` for each secret, space-separated (Standard Webhooks). */
export const signatureHeader = (secrets: ReadonlyArray<string>, messageId: string, timestamp: number, body: string): string =>
  secrets
    .map((secret) => `v1,${createHmac("sha256", keyOf(secret)).update(`${messageId}.${timestamp}.${body}`).digest("base64")}`)
    .join(" ")
