import {
  type ActionContext,
  children,
  column,
  type Computed,
  decimal,
  defineResource,
  type Draft,
  embedOne,
  expression,
  formatDecimal,
  freeText,
  id,
  inputOnly,
  invalid,
  metadata,
  money,
  products,
  type Row,
  stored,
  text,
  timestamp,
  timestamps,
  unprocessable
} from "@erp/core"
import { Effect, Option, Schema } from "effect"

/**
 * A document declared only for the engine's tests: items, a record number, a
 * status machine, computed totals, an action and events — every feature the
 * business documents use, on tables the tests create themselves.
 */
const itemFields = {
  id: id(),
  order_id: stored("uuid", Schema.String),
  description: text(200, { required: true }),
  // A reference the engine checks (422 before any write), embedded as the product's record.
  product_id: column({ type: "uuid", output: Schema.String, inputSchema: Schema.String.check(Schema.isUUID()), nullable: true, reference: { resource: () => products } }),
  product: embedOne({ key: "product_id", resource: () => products, output: Schema.Struct({ id: Schema.String, name: Schema.String, sale_price: Schema.NullOr(Schema.String) }), pick: ["id", "name", "sale_price"] }),
  quantity: money({ required: true }),
  unit_price: money({ required: true }),
  subtotal: money({ input: false }),
  position: stored("integer", Schema.Int),
  created_at: timestamp(),
  updated_at: timestamp()
}

const totals = (draft: Draft): Computed => {
  const items = (draft.children.items ?? []).map((item) => {
    const quantity = decimal(String(item.values.quantity ?? "0"))
    return { subtotal: formatDecimal(quantity.times(String(item.values.unit_price ?? "0"))) }
  })
  const sum = items.reduce((total, item) => total.plus(item.subtotal), decimal(0))
  const discount = draft.values.discount == null ? decimal(0) : decimal(String(draft.values.discount))
  return { values: { total: formatDecimal(sum.minus(discount)) }, children: { items } }
}

export const testOrders = defineResource({
  name: "test-orders",
  singular: "test-order",
  title: "Test order",
  description: "An order declared for the engine's tests.",
  notFoundCode: "TEST_ORDER_NOT_FOUND",
  events: true,
  table: "test_orders",
  fields: {
    id: id(),
    record_number: stored("integer", Schema.Int, { filter: { sortable: true } }),
    status: column({ type: "text", output: Schema.String, inputSchema: Schema.Literals(["draft", "confirmed", "cancelled"]), filter: true }),
    code: text(20, { nullable: true }),
    // A foreign key the engine does not check first: the store's constraint answers.
    product_ref: column({ type: "uuid", output: Schema.String, inputSchema: Schema.String.check(Schema.isUUID()), nullable: true }),
    notes: freeText(500),
    discount: money({ nullable: true }),
    total: money({ input: false, filter: { sortable: true } }),
    has_items: expression({
      sql: "EXISTS (SELECT 1 FROM test_order_items i WHERE i.tenant_id = r.tenant_id AND i.order_id = r.id)",
      type: "boolean",
      output: Schema.Boolean,
      filter: { sortable: true }
    }),
    items: children({ table: "test_order_items", parentKey: "order_id", fields: itemFields, identifier: "TestOrderItem", maxItems: 50 }),
    metadata: metadata(),
    // Engine extensions: several records from one create, a write of another record in the same unit, who wrote it.
    copies: inputOnly(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 5 })), { on: "create" }),
    follow_up: inputOnly(Schema.Struct({ reason: Schema.String }), { on: "create" }),
    created_by: stored("uuid", Schema.String, { nullable: true }),
    deleted_by: stored("uuid", Schema.String, { nullable: true }),
    ...timestamps()
  },
  defaultSort: { field: "record_number", order: "asc" },
  stamps: { created: "created_by", deleted: "deleted_by" },
  createMany: (input) => {
    const { copies, ...rest } = input
    return Effect.succeed(typeof copies === "number" ? Array.from({ length: copies }, (_, index) => ({ input: rest, values: { notes: `copy ${index + 1} of ${copies}` } })) : undefined)
  },
  afterWrite: ({ resource, draft, store }) =>
    Effect.gen(function* () {
      const followUp = draft.input.follow_up as { reason: string } | undefined
      if (!followUp) return
      yield* store.createRecord(resource, { notes: `follow-up: ${followUp.reason}`, items: [] })
      if (followUp.reason === "fail") return yield* Effect.fail(invalid("Refused after writing the follow-up", "REFUSED"))
    }),
  beforeRemove: ({ current }) =>
    current.status === "confirmed" ? Effect.fail(unprocessable("A confirmed order stays", { id: ["is confirmed"] }, "CONFIRMED")) : Effect.void,
  writes: { example: { items: [{ description: "Widget", quantity: "2", unit_price: "10" }] } },
  numbering: { field: "record_number" },
  status: {
    field: "status",
    initial: "draft",
    states: { draft: { editable: "all" }, confirmed: { editable: ["notes", "metadata"] }, cancelled: { editable: "none" } },
    transitions: { draft: ["confirmed", "cancelled"], confirmed: ["cancelled"] }
  },
  compute: totals,
  actions: [
    {
      name: "cancel",
      method: "POST",
      path: "cancel",
      permission: "update",
      summary: "Cancel a test order",
      description: "Moves a draft or confirmed order to cancelled, with a reason in its notes.",
      input: Schema.Struct({ reason: Schema.String.check(Schema.isMinLength(1)) }),
      output: Schema.Struct({ id: Schema.String, status: Schema.String, notes: Schema.NullOr(Schema.String) }),
      run: (context, input) =>
        Effect.gen(function* () {
          const { reason } = input as { reason: string }
          if (context.current.status === "cancelled") {
            return yield* Effect.fail(unprocessable("The order is already cancelled", { status: ["is cancelled"] }, "ALREADY_CANCELLED"))
          }
          if (reason === "fail after writing") {
            yield* repoUpdate(context, { status: "cancelled" })
            return yield* Effect.fail(invalid("Refused after the write", "REFUSED"))
          }
          yield* repoUpdate(context, { status: "cancelled", notes: reason })
          const after = yield* context.store.findById(context.resource, String(context.current.id))
          const record = Option.getOrThrow(after)
          return { id: record.id, status: record.status, notes: record.notes }
        })
    }
  ]
})

const repoUpdate = (context: ActionContext, values: Row) => context.store.update(context.resource, String(context.current.id), values)

/** The fixture's tables, created by the tests that use it (idempotent: one PostgreSQL database serves many files). */
export const FIXTURE_TABLES = `
CREATE TABLE IF NOT EXISTS test_orders (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  record_number integer NOT NULL,
  status text NOT NULL DEFAULT 'draft',
  code text,
  product_ref uuid,
  notes text,
  discount numeric(20, 6),
  total numeric(20, 6) NOT NULL DEFAULT 0 CONSTRAINT test_orders_total_check CHECK (total >= 0),
  metadata jsonb NOT NULL DEFAULT '{}',
  created_by uuid,
  deleted_by uuid,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, product_ref) REFERENCES products (tenant_id, id),
  UNIQUE (tenant_id, code)
);
CREATE TABLE IF NOT EXISTS test_order_items (
  tenant_id uuid NOT NULL,
  order_id uuid NOT NULL,
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  description text NOT NULL,
  product_id uuid,
  quantity numeric(20, 6) NOT NULL,
  unit_price numeric(20, 6) NOT NULL,
  subtotal numeric(20, 6) NOT NULL,
  position integer NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, order_id, id),
  FOREIGN KEY (tenant_id, order_id) REFERENCES test_orders (tenant_id, id)
);
`
