import * as SqlClient from "effect/sql/SqlClient"
import { Effect, Layer } from "effect"
import { isSealed, SecretBox } from "../secrets/secret-box.js"
import { StartupError } from "../startup-errors.js"

/** A stored secret we must read back: a text column sealed by `SecretBox`, one row per `id`. */
export interface SealedColumn {
  readonly table: string
  readonly id: string
  readonly column: string
  /** Limits the rows (a settings table holds more than secrets); constant SQL from this file only. */
  readonly where?: string
}

/** The signing private keys, the cursor HMAC key and webhook signing secrets. A new stored secret adds its line here. */
export const SEALED_COLUMNS = {
  signingKeys: { table: "oauth_signing_keys", id: "kid", column: "private_key_sealed" },
  cursorSecret: { table: "erp_settings", id: "key", column: "value", where: "key = 'cursor_secret'" },
  webhookSecrets: { table: "webhook_endpoints", id: "id", column: "secret_sealed" },
  webhookPreviousSecrets: { table: "webhook_endpoints", id: "id", column: "previous_secret_sealed", where: "previous_secret_sealed IS NOT NULL" }
} as const satisfies Record<string, SealedColumn>

/**
 * What a sealed value is bound to (GCM associated data): a value copied into another
 * row or column does not open there.
 */
export const sealContext = (column: SealedColumn, id: string) => `${column.table}.${column.column}:${id}`

const ROTATION_HINT =
  "set ERP_SECRET_KEY to the key they were sealed with; to change keys, set the new one as ERP_SECRET_KEY and the old one as ERP_SECRET_KEY_PREVIOUS"

/**
 * Seals what is still clear (rows of a store from before sealing) and seals again what an
 * earlier key sealed (`ERP_SECRET_KEY_PREVIOUS` during a rotation), each column in one
 * transaction with its rows locked, so hosts starting together on one database do not
 * race. A value no key opens stops the start with one line naming the keys.
 */
export const sealStoredSecrets = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  let sealed = 0
  for (const column of Object.values(SEALED_COLUMNS) as ReadonlyArray<SealedColumn>) {
    const where = column.where ? ` WHERE ${column.where}` : ""
    const count = yield* sql.withTransaction(Effect.gen(function* () {
      const rows = yield* sql.unsafe<{ id: string; value: string }>(
        `SELECT ${column.id} AS id, ${column.column} AS value FROM ${column.table}${where} FOR UPDATE`
      )
      let changed = 0
      for (const row of rows) {
        if (box.isCurrent(row.value)) continue
        const context = sealContext(column, row.id)
        const plain = isSealed(row.value)
          ? yield* box.open(row.value, context).pipe(Effect.mapError((error) => new StartupError(`cannot open the stored secrets: ${error.message}`, ROTATION_HINT)))
          : row.value
        yield* sql.unsafe(`UPDATE ${column.table} SET ${column.column} = $1 WHERE ${column.id} = $2`, [box.seal(plain, context), row.id])
        changed += 1
      }
      return changed
    }))
    sealed += count
  }
  if (sealed > 0) yield* Effect.logDebug(`sealed ${sealed} stored secret${sealed === 1 ? "" : "s"} under key ${box.currentKeyId}`)
})

/** Runs `sealStoredSecrets` when the core opens, before any service reads a secret. */
export const layerSealedSecrets: Layer.Layer<never, StartupError, SqlClient.SqlClient | SecretBox> = Layer.effectDiscard(
  sealStoredSecrets.pipe(Effect.catchTag("SqlError", Effect.die))
)
