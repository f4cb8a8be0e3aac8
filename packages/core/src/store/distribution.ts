import { Effect, Schema } from "effect"
import * as SqlClient from "effect/sql/SqlClient"

/**
 * Where each table goes on a PostgreSQL sharded by tenant (Citus). A table not listed here is a
 * tenant's table: distributed by `tenant_id`, co-located with every other tenant's table, so a
 * request's statements run on the one node that holds its tenant.
 */
export type Placement =
  /** Copied to every node: small, read with tenants' rows, rarely written. */
  | { readonly kind: "reference"; readonly why: string }
  /** Spread by a key of its own, not co-located with tenants: rows found by that key, written often. */
  | { readonly kind: "own-key"; readonly column: string; readonly why: string }

const reference = (why: string): Placement => ({ kind: "reference", why })
const ownKey = (column: string, why: string): Placement => ({ kind: "own-key", column, why })

const CATALOG = "a catalog: read with every tenant's records, written when the catalogs load"

/** The tables no tenant owns. */
export const GLOBAL_TABLES: Readonly<Record<string, Placement>> = {
  countries: reference(CATALOG),
  states: reference(CATALOG),
  cities: reference(CATALOG),
  banks: reference(CATALOG),
  payment_methods: reference(CATALOG),
  units_of_measurement: reference(CATALOG),
  tenants: reference("every tenant's table refers to it; written when a tenant is made or changed"),
  users: reference("a person may belong to several tenants; written at sign-up and password changes"),
  api_key_ids: reference("finds an API key's tenant by its public id, before the tenant is known; written when a key is made"),
  oauth_clients: reference("an app may be authorized by users of any tenant; written when an app is registered"),
  oauth_tokens: reference("found by the token's hash before the tenant is known, and a grant may cover every company of its user"),
  oauth_signing_keys: reference("the JWT signing keys, read by every host"),
  erp_settings: reference("store-wide settings (the cursor key), read at start"),
  erp_migrations: reference("the migrations applied, read and written by erp migrate"),
  oauth_authorization_codes: ownKey("code_hash", "an authorization code is found by its hash once, minutes after it is made"),
  web_sessions: ownKey("id_hash", "a sign-in session is found by its hash on every panel or consent request"),
  mcp_sessions: ownKey("id_hash", "an MCP session is found by its hash on every MCP call"),
  rate_limit_windows: ownKey("key", "counted on every OAuth endpoint request"),
  credential_rate_windows: ownKey("key", "counted as hosts lease a credential's requests")
}

export const TENANT_COLUMN = "tenant_id"

const TableRow = Schema.Struct({ name: Schema.String, tenant_column: Schema.NullOr(Schema.Boolean) })

/** A primary key, unique constraint, unique index (`i`) or foreign key (`f`), by its columns' names. */
const KeyRow = Schema.Struct({
  table: Schema.String,
  name: Schema.String,
  kind: Schema.Literals(["p", "u", "i", "f"]),
  columns: Schema.Array(Schema.NullOr(Schema.String)),
  referenced: Schema.NullOr(Schema.String),
  referenced_columns: Schema.NullOr(Schema.Array(Schema.NullOr(Schema.String)))
})
type Key = typeof KeyRow.Type

/** The tables of the current schema, each with whether its `tenant_id` is NOT NULL (null: no such column). */
const tablesStatement = `SELECT c.relname AS name, a.attnotnull AS tenant_column
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = '${TENANT_COLUMN}' AND NOT a.attisdropped
  WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname`

const columnNames = (relation: string, numbers: string) =>
  `ARRAY(SELECT a.attname::text FROM unnest(${numbers}) WITH ORDINALITY AS u(number, position)
    LEFT JOIN pg_attribute a ON a.attrelid = ${relation} AND a.attnum = u.number ORDER BY u.position)`

/** Every key of the current schema; an expression of a unique index is a null column. */
const keysStatement = `SELECT c.relname AS table, k.conname AS name, k.contype::text AS kind,
    ${columnNames("k.conrelid", "k.conkey")} AS columns, f.relname AS referenced,
    CASE WHEN k.contype = 'f' THEN ${columnNames("k.confrelid", "k.confkey")} END AS referenced_columns
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_class f ON f.oid = k.confrelid
  WHERE n.nspname = current_schema() AND k.contype IN ('p', 'u', 'f')
  UNION ALL
  SELECT c.relname, i.relname, 'i', ${columnNames("x.indrelid", "x.indkey::int2[]")}, NULL, NULL
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND x.indisunique AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)
  ORDER BY 1, 2`

/** What the schema would break on a store sharded by tenant, and the script that shards it. */
export interface DistributionPlan {
  readonly violations: ReadonlyArray<string>
  readonly script: string
}

const KIND_NAMES = { p: "primary key", u: "unique constraint", i: "unique index", f: "foreign key" } as const

/**
 * Checks the rules a sharded store needs, on the tables `tables` and keys `keys` of a schema, and
 * writes the script placing each table:
 * - a tenant's table has a NOT NULL `tenant_id` in every primary key, unique constraint and unique
 *   index, and each of its foreign keys to another tenant's table pairs `tenant_id` with `tenant_id`;
 * - a table with a key of its own has that column in each of its unique keys;
 * - a global table refers to reference tables only, and every listed table exists.
 */
export const planDistribution = (
  tables: ReadonlyArray<typeof TableRow.Type>,
  keys: ReadonlyArray<Key>,
  placements: Readonly<Record<string, Placement>> = GLOBAL_TABLES
): DistributionPlan => {
  const violations: Array<string> = []
  const present = new Set(tables.map((table) => table.name))
  const placementOf = (table: string): Placement | "tenant" => placements[table] ?? "tenant"
  for (const name of Object.keys(placements)) {
    if (!present.has(name)) violations.push(`${name} is placed in store/distribution.ts but is not a table of the schema`)
  }
  for (const table of tables) {
    if (placementOf(table.name) === "tenant" && table.tenant_column !== true) {
      violations.push(table.tenant_column === null
        ? `${table.name} has no ${TENANT_COLUMN}: add one, or place it as a global table in store/distribution.ts`
        : `${table.name}.${TENANT_COLUMN} may be null: a tenant's table needs it on every row`)
    }
  }
  for (const key of keys) {
    const placement = placementOf(key.table)
    const what = `${key.table}: ${KIND_NAMES[key.kind]} ${key.name}`
    if (key.kind === "f") {
      const target = key.referenced === null ? "tenant" : placementOf(key.referenced)
      if (target !== "tenant" && target.kind === "reference") continue
      if (placement !== "tenant") {
        violations.push(`${what} refers to ${key.referenced}, which is not a reference table: a global table may refer only to reference tables`)
      } else if (target !== "tenant") {
        violations.push(`${what} refers to ${key.referenced}, which is spread by a key of its own, not by tenant`)
      } else {
        const at = key.columns.indexOf(TENANT_COLUMN)
        if (at < 0 || key.referenced_columns?.[at] !== TENANT_COLUMN) {
          violations.push(`${what} refers to ${key.referenced} without pairing ${TENANT_COLUMN} with ${TENANT_COLUMN}`)
        }
      }
      continue
    }
    const column = placement === "tenant" ? TENANT_COLUMN : placement.kind === "own-key" ? placement.column : undefined
    if (column !== undefined && !key.columns.includes(column)) violations.push(`${what} does not include ${column}`)
  }
  return { violations, script: distributionScript(tables.map((table) => table.name), keys, placementOf) }
}

/**
 * Tables in an order where each comes after the tables it refers to (ties by name), so that
 * Citus finds every referenced table already placed.
 */
const referencesFirst = (names: ReadonlyArray<string>, keys: ReadonlyArray<Key>): ReadonlyArray<string> => {
  const within = new Set(names)
  const needs = new Map(names.map((name) => [name, new Set<string>()]))
  for (const key of keys) {
    if (key.kind === "f" && key.referenced !== null && key.referenced !== key.table && within.has(key.table) && within.has(key.referenced)) {
      needs.get(key.table)!.add(key.referenced)
    }
  }
  const ordered: Array<string> = []
  const placed = new Set<string>()
  while (ordered.length < names.length) {
    const ready = [...names].sort().find((name) => !placed.has(name) && [...needs.get(name)!].every((other) => placed.has(other)))
    // A cycle of foreign keys would leave none ready: the rest go by name.
    const next = ready ?? [...names].sort().find((name) => !placed.has(name))!
    placed.add(next)
    ordered.push(next)
  }
  return ordered
}

const distributionScript = (names: ReadonlyArray<string>, keys: ReadonlyArray<Key>, placementOf: (table: string) => Placement | "tenant"): string => {
  const ordered = referencesFirst(names, keys)
  const lines = ["-- On the Citus coordinator, after `erp migrate` (see docs/operations.md)."]
  const kindOf = (name: string) => {
    const placement = placementOf(name)
    return placement === "tenant" ? placement : placement.kind
  }
  for (const name of ordered) if (kindOf(name) === "reference") lines.push(`SELECT create_reference_table('${name}');`)
  const tenantTables = ordered.filter((name) => kindOf(name) === "tenant")
  tenantTables.forEach((name, index) =>
    lines.push(index === 0
      ? `SELECT create_distributed_table('${name}', '${TENANT_COLUMN}');`
      : `SELECT create_distributed_table('${name}', '${TENANT_COLUMN}', colocate_with => '${tenantTables[0]}');`))
  for (const name of ordered) {
    const placement = placementOf(name)
    if (placement !== "tenant" && placement.kind === "own-key") lines.push(`SELECT create_distributed_table('${name}', '${placement.column}', colocate_with => 'none');`)
  }
  return `${lines.join("\n")}\n`
}

/** The current schema's distribution plan, read from PostgreSQL's catalog. */
export const readDistributionPlan = (placements: Readonly<Record<string, Placement>> = GLOBAL_TABLES) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tables = yield* Effect.flatMap(sql.unsafe(tablesStatement), Schema.decodeUnknownEffect(Schema.Array(TableRow)))
    const keys = yield* Effect.flatMap(sql.unsafe(keysStatement), Schema.decodeUnknownEffect(Schema.Array(KeyRow)))
    return planDistribution(tables, keys, placements)
  })
