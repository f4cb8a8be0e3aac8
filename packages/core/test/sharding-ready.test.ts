import { Effect, ManagedRuntime } from "effect"
import * as SqlClient from "effect/sql/SqlClient"
import * as fs from "node:fs"
import { afterAll, describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { type DistributionPlan, GLOBAL_TABLES, layerCore, readDistributionPlan } from "../src/index.js"

/** Fails the transaction that made the broken tables, carrying what was read inside it. */
class RolledBack {
  constructor(readonly plan: DistributionPlan) {}
}

/**
 * The schema is ready for a store sharded by tenant (Citus): every key of a tenant's table names
 * the tenant, and every global table is placed (store/distribution.ts). A new table that breaks
 * the rule fails here; the cases below prove each rule is checked.
 */
describe.each(storeKinds)("the schema sharded by tenant, on %s", (kind) => {
  const runtime = ManagedRuntime.make(layerCore(testStore(kind)))
  afterAll(() => runtime.dispose())

  it("keeps every rule, and places every table in the script", async () => {
    const plan = await runtime.runPromise(readDistributionPlan())
    expect(plan.violations).toEqual([])
    const tables = await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`))
    const placed = [...plan.script.matchAll(/create_(?:reference|distributed)_table\('([a-z_]+)'/g)].map((match) => match[1])
    expect([...placed].sort()).toEqual(tables.map((table) => table.name).sort())
    // Referenced tables first: tenants before any table that refers to it, customers before sales orders.
    expect(placed.indexOf("tenants")).toBeLessThan(placed.indexOf("customers"))
    expect(placed.indexOf("customers")).toBeLessThan(placed.indexOf("sales_orders"))
    expect(placed.indexOf("sales_orders")).toBeLessThan(placed.indexOf("sales_order_items"))
  })

  it("names each table that breaks a rule", async () => {
    const broken = Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`
        CREATE TABLE t_unique (tenant_id uuid NOT NULL REFERENCES tenants (id), id uuid, code text, PRIMARY KEY (tenant_id, id), CONSTRAINT t_unique_code UNIQUE (code),
          CONSTRAINT t_unique_exclusion EXCLUDE USING btree (code WITH =));
        CREATE UNIQUE INDEX t_unique_lower ON t_unique (tenant_id, lower(code));
        CREATE UNIQUE INDEX t_unique_expression ON t_unique (lower(code));
        CREATE TABLE t_unpaired (tenant_id uuid NOT NULL, id uuid, owner uuid, customer_id uuid, PRIMARY KEY (tenant_id, id),
          CONSTRAINT t_unpaired_customer FOREIGN KEY (owner, customer_id) REFERENCES customers (tenant_id, id));
        CREATE TABLE t_referenced (tenant_id uuid NOT NULL, id uuid, code text, PRIMARY KEY (tenant_id, id));
        CREATE UNIQUE INDEX t_referenced_code ON t_referenced (code);
        CREATE TABLE t_referrer (tenant_id uuid NOT NULL, id uuid, code text, PRIMARY KEY (tenant_id, id),
          CONSTRAINT t_referrer_code FOREIGN KEY (code) REFERENCES t_referenced (code));
        CREATE TABLE t_actions (tenant_id uuid NOT NULL, id uuid, customer_id uuid, number int GENERATED ALWAYS AS IDENTITY, PRIMARY KEY (tenant_id, id),
          CONSTRAINT t_actions_customer FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id) ON DELETE SET NULL (customer_id),
          CONSTRAINT t_actions_tenant FOREIGN KEY (tenant_id) REFERENCES tenants (id) ON UPDATE CASCADE);
        CREATE TABLE t_nullable (tenant_id uuid REFERENCES tenants (id), id uuid, CONSTRAINT t_nullable_key PRIMARY KEY (id));
        CREATE TABLE t_unplaced (id uuid PRIMARY KEY);
        CREATE TABLE t_reference (id uuid PRIMARY KEY, tenant_id uuid NOT NULL, customer_id uuid,
          CONSTRAINT t_reference_customer FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id));
        CREATE TABLE t_own_key (session text, other text, CONSTRAINT t_own_key_other UNIQUE (other));
        CREATE TABLE t_keyless (id text PRIMARY KEY);
      `)
      return yield* readDistributionPlan({
        ...GLOBAL_TABLES,
        t_reference: { kind: "reference", why: "a test" },
        t_own_key: { kind: "own-key", column: "session", why: "a test" },
        t_keyless: { kind: "own-key", column: "session", why: "a test" },
        t_missing: { kind: "reference", why: "a test" }
      })
    })
    // Made and read in one transaction that is rolled back: the store is left as it was.
    const outcome = await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql.withTransaction(Effect.flatMap(broken, (plan) => Effect.fail(new RolledBack(plan)))).pipe(Effect.flip)))
    if (!(outcome instanceof RolledBack)) throw outcome
    const { plan } = outcome
    const refused = "Citus refuses it on the column a table is distributed by"
    expect(plan.violations).toEqual([
      "t_missing is placed in store/distribution.ts but is not a table of the schema",
      "t_keyless has no column session, the key store/distribution.ts spreads it by",
      "t_nullable.tenant_id may be null: a tenant's table needs it on every row",
      "t_own_key.session may be null: the key a table is spread by needs a value on every row",
      "t_unplaced has no tenant_id: add one, or place it as a global table in store/distribution.ts",
      "t_actions.number is an identity column of type integer: Citus places a table's identity column only as a bigint",
      `t_actions: foreign key t_actions_customer sets tenant_id to null or its default on delete: ${refused}`,
      `t_actions: foreign key t_actions_tenant changes tenant_id on update: ${refused}`,
      "t_keyless: primary key t_keyless_pkey does not include session",
      "t_nullable: primary key t_nullable_key does not include tenant_id",
      "t_own_key: unique constraint t_own_key_other does not include session",
      "t_reference: foreign key t_reference_customer refers to customers, which is not a reference table: a global table may refer only to reference tables",
      // A unique index no constraint of its own table stands on, though a foreign key of another table does.
      "t_referenced: unique index t_referenced_code does not include tenant_id",
      "t_referrer: foreign key t_referrer_code refers to t_referenced without pairing tenant_id with tenant_id",
      "t_unique: unique constraint t_unique_code does not include tenant_id",
      "t_unique: exclusion constraint t_unique_exclusion does not include tenant_id",
      "t_unique: unique index t_unique_expression does not include tenant_id",
      "t_unpaired: foreign key t_unpaired_customer refers to customers without pairing tenant_id with tenant_id",
      "t_unplaced: primary key t_unplaced_pkey does not include tenant_id"
    ])
    expect((await runtime.runPromise(readDistributionPlan())).violations).toEqual([])
  })

  it.runIf(kind === "pglite")("is the script docs/operations.md gives", async () => {
    const plan = await runtime.runPromise(readDistributionPlan())
    expect(fs.readFileSync("docs/operations.md", "utf8")).toContain(`\`\`\`sql\n${plan.script}\`\`\``)
  })
})
