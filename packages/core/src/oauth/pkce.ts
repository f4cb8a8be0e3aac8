import { createHash, timingSafeEqual } from "node:crypto"

/** RFC 7636 section 4.1: 43 to 128 characters of A-Z a-z 0-9 - . _ ~. */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

export const wellFormedVerifier = (verifier: string | undefined): verifier is string => verifier !== undefined && VERIFIER.test(verifier)

/** RFC 7636 S256: BASE64URL(SHA256(verifier)) equals the challenge. */
export const pkceMatches = (verifier: string, challenge: string) => {
  const computed = Buffer.from(createHash("sha256").update(verifier, "ascii").digest("base64url"))
  const expected = Buffer.from(challenge)
  return computed.length === expected.length && timingSafeEqual(computed, expected)
}
