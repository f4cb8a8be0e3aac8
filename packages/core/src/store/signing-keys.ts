import * as SqlClient from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from "jose"
import { randomUUID } from "node:crypto"

export const SIGNING_ALGORITHM = "ES256"

export interface SigningKey {
  readonly kid: string
  readonly publicJwk: JWK
  readonly privateKey: CryptoKey | Uint8Array
}

/**
 * The JWT signing keys, kept in the store so every host signs and verifies alike.
 * The first host that needs one generates it; keys are never deleted, only retired.
 */
export const makeSigningKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const load = sql<{ kid: string; public_jwk: JWK; private_jwk: JWK }>`SELECT kid, public_jwk, private_jwk FROM oauth_signing_keys
    WHERE retired_at IS NULL ORDER BY created_at DESC, kid`.pipe(Effect.orDie)

  const generate = Effect.gen(function* () {
    const { publicKey, privateKey } = yield* Effect.promise(() => generateKeyPair(SIGNING_ALGORITHM, { extractable: true }))
    const kid = randomUUID()
    const publicJwk = { ...(yield* Effect.promise(() => exportJWK(publicKey))), kid, alg: SIGNING_ALGORITHM, use: "sig" }
    const privateJwk = { ...(yield* Effect.promise(() => exportJWK(privateKey))), kid, alg: SIGNING_ALGORITHM }
    yield* sql`INSERT INTO oauth_signing_keys (kid, algorithm, public_jwk, private_jwk)
      VALUES (${kid}, ${SIGNING_ALGORITHM}, ${JSON.stringify(publicJwk)}::jsonb, ${JSON.stringify(privateJwk)}::jsonb)`.pipe(Effect.orDie)
  })

  const keys = Effect.gen(function* () {
    let rows = yield* load
    if (rows.length === 0) {
      yield* generate
      rows = yield* load
    }
    return yield* Effect.forEach(rows, (row) =>
      Effect.promise(() => importJWK(row.private_jwk, SIGNING_ALGORITHM)).pipe(
        Effect.map((privateKey): SigningKey => ({ kid: row.kid, publicJwk: row.public_jwk, privateKey }))
      ))
  })

  // Loaded once per host; a key made by another host after that is picked up by the next refresh.
  const cached = yield* Effect.cachedWithTTL(keys, "10 minutes")
  return {
    current: Effect.map(cached, (all) => all[0]),
    publicKeys: Effect.map(cached, (all) => all.map((key) => key.publicJwk))
  }
})
