import * as SqlClient from "effect/sql/SqlClient"
import { Context, Effect, Layer } from "effect"
import { type CryptoKey, exportJWK, generateKeyPair, importJWK, type JWK } from "jose"
import { randomUUID } from "node:crypto"
import { SecretBox } from "../secrets/secret-box.js"
import { sealContext, SEALED_COLUMNS } from "./sealed-secrets.js"

export const SIGNING_ALGORITHM = "ES256"

export interface SigningKey {
  readonly kid: string
  readonly publicJwk: JWK
  readonly privateKey: CryptoKey | Uint8Array
}

/** The JWT signing keys: the current one signs, all unretired ones verify. */
export class SigningKeys extends Context.Service<SigningKeys, {
  readonly current: Effect.Effect<SigningKey>
  readonly publicKeys: Effect.Effect<ReadonlyArray<JWK>>
}>()("erp/core/SigningKeys") {}

/**
 * The JWT signing keys, kept in the store so every host signs and verifies alike, the
 * private half sealed by `SecretBox`. The first host that needs one generates it; keys
 * are never deleted, only retired.
 */
export const makeSigningKeys = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  const context = (kid: string) => sealContext(SEALED_COLUMNS.signingKeys, kid)

  const load = sql<{ kid: string; public_jwk: JWK; private_key_sealed: string }>`SELECT kid, public_jwk, private_key_sealed FROM oauth_signing_keys
    WHERE retired_at IS NULL ORDER BY created_at DESC, kid`.pipe(Effect.orDie)

  const generate = Effect.gen(function* () {
    const { publicKey, privateKey } = yield* Effect.promise(() => generateKeyPair(SIGNING_ALGORITHM, { extractable: true }))
    const kid = randomUUID()
    const publicJwk = { ...(yield* Effect.promise(() => exportJWK(publicKey))), kid, alg: SIGNING_ALGORITHM, use: "sig" }
    const privateJwk = { ...(yield* Effect.promise(() => exportJWK(privateKey))), kid, alg: SIGNING_ALGORITHM }
    yield* sql`INSERT INTO oauth_signing_keys (kid, algorithm, public_jwk, private_key_sealed)
      VALUES (${kid}, ${SIGNING_ALGORITHM}, ${JSON.stringify(publicJwk)}::jsonb, ${box.seal(JSON.stringify(privateJwk), context(kid))})`.pipe(Effect.orDie)
  })

  const keys = Effect.gen(function* () {
    let rows = yield* load
    if (rows.length === 0) {
      yield* generate
      rows = yield* load
    }
    return yield* Effect.forEach(rows, (row) =>
      box.open(row.private_key_sealed, context(row.kid)).pipe(
        // Start-up opened every sealed value already; failing here means the store changed under us.
        Effect.orDie,
        Effect.flatMap((json) => Effect.promise(() => importJWK(JSON.parse(json) as JWK, SIGNING_ALGORITHM))),
        Effect.map((privateKey): SigningKey => ({ kid: row.kid, publicJwk: row.public_jwk, privateKey }))
      ))
  })

  // Loaded once per host; a key made by another host after that is picked up by the next refresh.
  const cached = yield* Effect.cachedWithTTL(keys, "10 minutes")
  return SigningKeys.of({
    current: Effect.map(cached, (all) => all[0]),
    publicKeys: Effect.map(cached, (all) => all.map((key) => key.publicJwk))
  })
})

export const layerSigningKeys: Layer.Layer<SigningKeys, never, SqlClient.SqlClient | SecretBox> = Layer.effect(SigningKeys, makeSigningKeys)
