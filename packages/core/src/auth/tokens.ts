import { createHash, randomBytes, timingSafeEqual } from "node:crypto"

const ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyz0123456789"
export const BASE62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

/** Uniform random text over `alphabet` (rejection sampling, no modulo bias). */
export const randomText = (length: number, alphabet: string): string => {
  const limit = 256 - (256 % alphabet.length)
  let out = ""
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit) out += alphabet[byte % alphabet.length]
      if (out.length === length) break
    }
  }
  return out
}

/** SHA-256 of a high-entropy secret; such secrets need no slow hash, only never being stored in clear. */
export const hashSecret = (secret: string): string => createHash("sha256").update(secret, "utf8").digest("hex")

export const sameHash = (leftHex: string, rightHex: string): boolean => {
  const left = Buffer.from(leftHex, "hex")
  const right = Buffer.from(rightHex, "hex")
  return left.length === right.length && timingSafeEqual(left, right)
}

const API_KEY = /^sk_([a-z0-9]{16})_([A-Za-z0-9]{32,128})$/

export interface ApiKeyParts {
  readonly publicId: string
  readonly secret: string
}

/** `sk_<publicId>_<secret>`: the public id finds the key, the secret proves it. */
export const newApiKeyToken = (): ApiKeyParts & { readonly token: string } => {
  const publicId = randomText(16, ALPHANUMERIC)
  const secret = randomText(40, BASE62)
  return { publicId, secret, token: `sk_${publicId}_${secret}` }
}

export const parseApiKeyToken = (token: string): ApiKeyParts | undefined => {
  const match = API_KEY.exec(token)
  return match ? { publicId: match[1], secret: match[2] } : undefined
}

/** `Bearer <token>` or the bare token, as the spec allows. */
export const tokenFromAuthorization = (header: string | undefined): string | undefined => {
  if (!header) return undefined
  const trimmed = header.trim()
  const bearer = /^Bearer\s+(.+)$/i.exec(trimmed)
  const token = (bearer ? bearer[1] : trimmed).trim()
  return token.length > 0 ? token : undefined
}
