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

/** A column of a table of the current schema. */
const ColumnRow = Schema.Struct({
  table: Schema.String,
  name: Schema.String,
  not_null: Schema.Boolean,
  type: Schema.String,
  identity: Schema.Boolean
})

/**
 * A primary key (`p`), unique constraint (`u`), exclusion constraint (`x`), unique index not
 * backing a constraint (`i`) or foreign key (`f`), by its columns' names; a foreign key also
 * carries its `ON DELETE` and `ON UPDATE` actions as `pg_constraint` spells them.
 */
const KeyRow = Schema.Struct({
  table: Schema.String,
  name: Schema.String,
  kind: Schema.Literals(["p", "u", "x", "i", "f"]),
  columns: Schema.Array(Schema.NullOr(Schema.String)),
  referenced: Schema.NullOr(Schema.String),
  referenced_columns: Schema.NullOr(Schema.Array(Schema.NullOr(Schema.String))),
  on_delete: Schema.NullOr(Schema.String),
  on_update: Schema.NullOr(Schema.String)
})
type Key = typeof KeyRow.Type

/** What the rules are checked on: the tables of a schema, their columns and their keys. */
export interface SchemaCatalog {
  readonly tables: ReadonlyArray<string>
  readonly columns: ReadonlyArray<typeof ColumnRow.Type>
  readonly keys: ReadonlyArray<Key>
}

// A partition is placed with its parent, and its keys are copies of the parent's: neither is read.
const tablesStatement = `SELECT c.relname AS name
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname`

const columnsStatement = `SELECT c.relname AS table, a.attname AS name, a.attnotnull AS not_null,
    format_type(a.atttypid, a.atttypmod) AS type, a.attidentity <> '' AS identity
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND a.attnum > 0 AND NOT a.attisdropped
  ORDER BY c.relname, a.attnum`

const columnNames = (relation: string, numbers: string) =>
  `ARRAY(SELECT a.attname::text FROM unnest(${numbers}) WITH ORDINALITY AS u(number, position)
    LEFT JOIN pg_attribute a ON a.attrelid = ${relation} AND a.attnum = u.number ORDER BY u.position)`

/** Every key of the current schema; an expression of a unique index is a null column. */
const keysStatement = `SELECT c.relname AS table, k.conname AS name, k.contype::text AS kind,
    ${columnNames("k.conrelid", "k.conkey")} AS columns, f.relname AS referenced,
    CASE WHEN k.contype = 'f' THEN ${columnNames("k.confrelid", "k.confkey")} END AS referenced_columns,
    CASE WHEN k.contype = 'f' THEN k.confdeltype::text END AS on_delete,
    CASE WHEN k.contype = 'f' THEN k.confupdtype::text END AS on_update
  FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_class f ON f.oid = k.confrelid
  WHERE n.nspname = current_schema() AND NOT c.relispartition AND k.contype IN ('p', 'u', 'x', 'f')
  UNION ALL
  SELECT c.relname, i.relname, 'i', ${columnNames("x.indrelid", "x.indkey::int2[]")}, NULL, NULL, NULL, NULL
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = current_schema() AND NOT c.relispartition AND x.indisunique
    AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.conrelid = x.indrelid)
  ORDER BY 1, 2`

/** What the schema would break on a store sharded by tenant, and the script that shards it. */
export interface DistributionPlan {
  readonly violations: ReadonlyArray<string>
  readonly script: string
}

const KIND_NAMES = { p: "primary key", u: "unique constraint", x: "exclusion constraint", i: "unique index", f: "foreign key" } as const

/** `pg_constraint`'s foreign key actions Citus refuses on a column a table is distributed by. */
const SETS_NULL_OR_DEFAULT = new Set(["n", "d"])
const CASCADES = "c"

/**
 * Checks the rules a sharded store needs on a schema's catalog, and writes the script placing
 * each table:
 * - a tenant's table has a NOT NULL `tenant_id` in every primary key, unique or exclusion
 *   constraint and unique index, and each of its foreign keys to another tenant's table pairs
 *   `tenant_id` with `tenant_id`;
 * - a table spread by a key of its own has that column, NOT NULL, in each of those keys;
 * - a foreign key of a distributed table that holds the column it is distributed by neither sets
 *   it to null or its default nor cascades an update to it (Citus refuses such a key);
 * - a global table refers to reference tables only, an identity column is a bigint (Citus places
 *   no other), and every listed table exists.
 */
export const planDistribution = (
  catalog: SchemaCatalog,
  placements: Readonly<Record<string, Placement>> = GLOBAL_TABLES
): DistributionPlan => {
  const violations: Array<string> = []
  const present = new Set(catalog.tables)
  const placementOf = (table: string): Placement | "tenant" => placements[table] ?? "tenant"
  /** The column a table is distributed by; none for a reference table. */
  const distributionColumn = (table: string): string | undefined => {
    const placement = placementOf(table)
    return placement === "tenant" ? TENANT_COLUMN : placement.kind === "own-key" ? placement.column : undefined
  }
  for (const name of Object.keys(placements)) {
    if (!present.has(name)) violations.push(`${name} is placed in store/distribution.ts but is not a table of the schema`)
  }
  for (const table of catalog.tables) {
    const column = distributionColumn(table)
    if (column === undefined) continue
    const found = catalog.columns.find((candidate) => candidate.table === table && candidate.name === column)
    const tenant = placementOf(table) === "tenant"
    if (found === undefined) {
      violations.push(tenant
        ? `${table} has no ${TENANT_COLUMN}: add one, or place it as a global table in store/distribution.ts`
        : `${table} has no column ${column}, the key store/distribution.ts spreads it by`)
    } else if (!found.not_null) {
      violations.push(tenant
        ? `${table}.${TENANT_COLUMN} may be null: a tenant's table needs it on every row`
        : `${table}.${column} may be null: the key a table is spread by needs a value on every row`)
    }
  }
  for (const column of catalog.columns) {
    if (column.identity && column.type !== "bigint") {
      violations.push(`${column.table}.${column.name} is an identity column of type ${column.type}: Citus places a table's identity column only as a bigint`)
    }
  }
  for (const key of catalog.keys) {
    const placement = placementOf(key.table)
    const column = distributionColumn(key.table)
    const what = `${key.table}: ${KIND_NAMES[key.kind]} ${key.name}`
    if (key.kind !== "f") {
      if (column !== undefined && !key.columns.includes(column)) violations.push(`${what} does not include ${column}`)
      continue
    }
    if (column !== undefined && key.columns.includes(column)) {
      if (key.on_delete !== null && SETS_NULL_OR_DEFAULT.has(key.on_delete)) {
        violations.push(`${what} sets ${column} to null or its default on delete: Citus refuses it on the column a table is distributed by`)
      }
      if (key.on_update !== null && (SETS_NULL_OR_DEFAULT.has(key.on_update) || key.on_update === CASCADES)) {
        violations.push(`${what} changes ${column} on update: Citus refuses it on the column a table is distributed by`)
      }
    }
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
  }
  return { violations, script: distributionScript(catalog.tables, catalog.keys, placementOf) }
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
    const tables = yield* Effect.flatMap(sql.unsafe(tablesStatement), Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ name: Schema.String }))))
    const columns = yield* Effect.flatMap(sql.unsafe(columnsStatement), Schema.decodeUnknownEffect(Schema.Array(ColumnRow)))
    const keys = yield* Effect.flatMap(sql.unsafe(keysStatement), Schema.decodeUnknownEffect(Schema.Array(KeyRow)))
    return planDistribution({ tables: tables.map((table) => table.name), columns, keys }, placements)
  })
