import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, ManagedRuntime, Option, Result } from "effect"
import { randomUUID } from "node:crypto"
import { makeMemoryStore } from "../../../test/support/memory-store.js"
import { testOrders } from "../../../test/support/fixture-orders.js"
import {
  applyChildren,
  applyInput,
  checkEditable,
  checkTransition,
  childPlan,
  type Principal,
  ResourceEngine,
  type Row,
  type StatusMachine
} from "../src/index.js"

/** The engine's write rules over stub layers: no database, every rule observable. */
const setup = () => {
  const store = makeMemoryStore()
  const runtime = ManagedRuntime.make(store.layer)
  const tenantId = randomUUID()
  const principal: Principal = { tenantId, tenantCountry: "BR", actor: { kind: "operator", id: "test" }, role: "admin", grants: new Map() }
  const run = <A, E>(use: (engine: ResourceEngine["Service"]) => Effect.Effect<A, E>) => runtime.runPromiseExit(Effect.flatMap(ResourceEngine, use))
  const ok = async <A, E>(use: (engine: ResourceEngine["Service"]) => Effect.Effect<A, E>) => {
    const exit = await run(use)
    if (Exit.isFailure(exit)) throw new Error(`expected success, got ${JSON.stringify(exit.cause)}`)
    return exit.value as A
  }
  const failure = async <A, E>(use: (engine: ResourceEngine["Service"]) => Effect.Effect<A, E>) => {
    const exit = await run(use)
    const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
    if (Option.isNone(error)) throw new Error(`expected a failure, got ${JSON.stringify(exit)}`)
    return error.value as { _tag: string; message: string; code?: string; fields?: Record<string, ReadonlyArray<string>> }
  }
  const create = (body: unknown) => ok((engine) => engine.create(testOrders, principal, body)) as Promise<Row & { id: string; items: Array<Row> }>
  const update = (id: string, body: unknown) => ok((engine) => engine.update(testOrders, principal, id, body)) as Promise<Row & { items: Array<Row> }>
  const eventsOf = (id: string) => store.events.filter((event) => event.resourceId === id).map((event) => event.action)
  return { store, runtime, principal, ok, failure, create, update, eventsOf }
}

const item = (description: string, quantity: string, unit_price: string) => ({ description, quantity, unit_price })

describe("engine writes (stub layers)", () => {
  it("computes item subtotals and the total with six-digit decimals, numbers records in order, starts in the initial state", async () => {
    const { create, runtime } = setup()
    const first = await create({ items: [item("A", "2", "10.5"), item("B", "0.333333", "3")], discount: "1" })
    const second = await create({ items: [item("C", "1", "1")] })
    expect(first.items.map((child) => child.subtotal)).toEqual(["21.000000", "0.999999"])
    expect(first.total).toBe("20.999999")
    expect(first.items.map((child) => child.position)).toEqual([0, 1])
    expect([first.record_number, second.record_number]).toEqual([1, 2])
    expect(first.status).toBe("draft")
    await runtime.dispose()
  })

  it("refuses computed and system fields by name, header and items alike, writing nothing", async () => {
    const { failure, store, principal } = setup()
    const refused = await failure((engine) =>
      engine.create(testOrders, principal, { total: "5", record_number: 9, items: [{ ...item("A", "1", "1"), subtotal: "1" }] })
    )
    expect(refused._tag).toBe("InvalidRequest")
    expect(Object.keys(refused.fields ?? {}).sort()).toEqual(["items.0.subtotal", "record_number", "total"])
    expect(store.events).toEqual([])
  })

  it("replaces the item list on PATCH: keeps by id (changed in place), adds new ones, removes the rest, positions follow the order", async () => {
    const { create, update } = setup()
    const order = await create({ items: [item("A", "1", "1"), item("B", "1", "2"), item("C", "1", "3")] })
    const [a, b] = order.items
    const after = await update(order.id, { items: [{ id: b.id, quantity: "3" }, item("D", "1", "4"), { id: a.id }] })
    expect(after.items.map((child) => [child.description, child.position, child.subtotal])).toEqual([
      ["B", 0, "6.000000"],
      ["D", 1, "4.000000"],
      ["A", 2, "1.000000"]
    ])
    expect(after.items.find((child) => child.description === "B")!.id).toBe(b.id)
    expect(after.total).toBe("11.000000")
  })

  it("answers 422 for an item id of another record and 400 for a new item without its required fields", async () => {
    const { create, failure, principal } = setup()
    const order = await create({ items: [item("A", "1", "1")] })
    const other = await create({ items: [item("X", "1", "1")] })
    const foreign = await failure((engine) => engine.update(testOrders, principal, order.id, { items: [{ id: other.items[0].id }] }))
    expect(foreign._tag).toBe("Unprocessable")
    expect(foreign.fields).toHaveProperty(["items.0.id"])
    const incomplete = await failure((engine) => engine.update(testOrders, principal, order.id, { items: [{ description: "no numbers" }] }))
    expect(incomplete._tag).toBe("InvalidRequest")
    expect(Object.keys(incomplete.fields ?? {}).sort()).toEqual(["items.0.quantity", "items.0.unit_price"])
  })

  it("records exactly one event per operation: none for a PATCH that changes nothing, one update for an item-only change", async () => {
    const { create, update, ok, principal, eventsOf } = setup()
    const order = await create({ items: [item("A", "1", "1")] })
    expect(eventsOf(order.id)).toEqual(["create"])
    await update(order.id, { notes: null })
    expect(eventsOf(order.id)).toEqual(["create"])
    await update(order.id, { items: [{ id: order.items[0].id, quantity: "2" }] })
    expect(eventsOf(order.id)).toEqual(["create", "update"])
    await ok((engine) => engine.remove(testOrders, principal, order.id))
    await ok((engine) => engine.restore(testOrders, principal, order.id))
    expect(eventsOf(order.id)).toEqual(["create", "update", "delete", "restore"])
  })

  it("limits PATCH by status: a confirmed order takes only its editable fields, a cancelled one nothing, not even {}", async () => {
    const { create, update, failure, principal, eventsOf } = setup()
    const order = await create({ items: [item("A", "1", "1")] })
    await update(order.id, { status: "confirmed" })
    const refused = await failure((engine) => engine.update(testOrders, principal, order.id, { discount: "1", code: "X", notes: "fine" }))
    expect(refused._tag).toBe("Unprocessable")
    expect(Object.keys(refused.fields ?? {}).sort()).toEqual(["code", "discount"])
    expect((await update(order.id, { notes: "fine" })).notes).toBe("fine")
    const backwards = await failure((engine) => engine.update(testOrders, principal, order.id, { status: "draft" }))
    expect(backwards.code).toBe("INVALID_TRANSITION")
    await update(order.id, { status: "cancelled" })
    const empty = await failure((engine) => engine.update(testOrders, principal, order.id, {}))
    expect(empty._tag).toBe("Unprocessable")
    expect(empty.fields).toHaveProperty("status")
    expect(eventsOf(order.id)).toEqual(["create", "update", "update", "update"])
  })

  it("runs an action inside the unit of work: its write and one update event, or neither when it fails", async () => {
    const { create, ok, failure, principal, eventsOf, store } = setup()
    const order = await create({ items: [item("A", "1", "1")] })
    const cancel = testOrders.actions![0]
    const failed = await failure((engine) => engine.action(testOrders, cancel, principal, order.id, {}, { reason: "fail after writing" }))
    expect(failed.code).toBe("REFUSED")
    expect([...store.tables.get("test_orders")!.values()][0].status).toBe("draft")
    expect(eventsOf(order.id)).toEqual(["create"])
    const output = await ok((engine) => engine.action(testOrders, cancel, principal, order.id, {}, { reason: "customer asked" }))
    expect(output).toEqual({ id: order.id, status: "cancelled", notes: "customer asked" })
    expect(eventsOf(order.id)).toEqual(["create", "update"])
    const again = await failure((engine) => engine.action(testOrders, cancel, principal, order.id, {}, { reason: "twice" }))
    expect(again.code).toBe("ALREADY_CANCELLED")
  })
})

describe("engine extensions (stub layers)", () => {
  it("creates several records from one request (createMany): answered as { data }, one create event each", async () => {
    const { ok, principal, eventsOf } = setup()
    const answer = await ok((engine) => engine.create(testOrders, principal, { copies: 3, items: [item("A", "1", "2")] })) as unknown as { data: Array<Row & { id: string }> }
    expect(answer.data.map((order) => [order.record_number, order.notes, order.total])).toEqual([[1, "copy 1 of 3", "2.000000"], [2, "copy 2 of 3", "2.000000"], [3, "copy 3 of 3", "2.000000"]])
    for (const order of answer.data) expect(eventsOf(order.id)).toEqual(["create"])
  })

  it("writes another record in the same unit of work (afterWrite + createRecord), or nothing at all when the hook fails", async () => {
    const { ok, failure, principal, store } = setup()
    const order = await ok((engine) => engine.create(testOrders, principal, { follow_up: { reason: "call back" }, items: [] })) as Row & { id: string }
    const rows = [...store.tables.get("test_orders")!.values()]
    expect(rows.map((row) => row.notes ?? "").sort()).toEqual(["", "follow-up: call back"])
    expect(store.events.map((event) => event.action)).toEqual(["create", "create"])
    expect(store.events[0].resourceId).toBe(order.id)
    const refused = await failure((engine) => engine.create(testOrders, principal, { follow_up: { reason: "fail" }, items: [] }))
    expect(refused.code).toBe("REFUSED")
    expect(store.tables.get("test_orders")!.size).toBe(2)
    expect(store.events).toHaveLength(2)
  })

  it("asks beforeRemove first: a refusal deletes nothing and records nothing", async () => {
    const { create, update, failure, ok, principal, eventsOf } = setup()
    const order = await create({ items: [] })
    await update(order.id, { status: "confirmed" })
    expect((await failure((engine) => engine.remove(testOrders, principal, order.id))).code).toBe("CONFIRMED")
    expect(eventsOf(order.id)).toEqual(["create", "update"])
    const draft = await create({ items: [] })
    await ok((engine) => engine.remove(testOrders, principal, draft.id))
    expect(eventsOf(draft.id)).toEqual(["create", "delete"])
  })

  it("stamps the caller's user id on create and delete; API keys and operators leave them null", async () => {
    const { ok, store, principal } = setup()
    const user: Principal = { ...principal, actor: { kind: "user", id: randomUUID(), email: "ana@acme.example" } }
    const mine = await ok((engine) => engine.create(testOrders, user, { items: [] })) as Row & { id: string }
    const theirs = await ok((engine) => engine.create(testOrders, principal, { items: [] })) as Row & { id: string }
    expect([mine.created_by, theirs.created_by]).toEqual([user.actor.id, null])
    await ok((engine) => engine.remove(testOrders, user, mine.id))
    expect(store.tables.get("test_orders")!.get(mine.id)!.deleted_by).toBe(user.actor.id)
  })
})

describe("drafts and status (pure)", () => {
  const machine: StatusMachine = testOrders.status!

  it("checks editable fields per state and transitions along declared edges", () => {
    expect(Result.isSuccess(checkEditable(machine, { status: "draft" }, ["discount", "items"]))).toBe(true)
    expect(Result.isFailure(checkEditable(machine, { status: "confirmed" }, ["items"]))).toBe(true)
    expect(Result.isSuccess(checkEditable(machine, { status: "confirmed" }, ["notes", "status"]))).toBe(true)
    expect(Result.isFailure(checkEditable(machine, { status: "cancelled" }, []))).toBe(true)
    expect(Result.isSuccess(checkTransition(machine, "draft", "confirmed"))).toBe(true)
    expect(Result.isFailure(checkTransition(machine, "cancelled", "draft"))).toBe(true)
    expect(Result.isSuccess(checkTransition(machine, "confirmed", "confirmed"))).toBe(true)
  })

  it("merges metadata key by key on update and replaces plain fields", () => {
    const current = { id: "1", notes: "old", metadata: { a: 1, b: 2 }, discount: "1.000000", code: null, product_ref: null, status: "draft", total: "0", record_number: 1 }
    const values = applyInput(testOrders.fields, { notes: "new", metadata: { b: null, c: 3 } }, current)
    expect(values.notes).toBe("new")
    expect(values.metadata).toEqual({ a: 1, c: 3 })
    expect(values.discount).toBe("1.000000")
  })

  it("plans child writes: unchanged kept children cost nothing, moved ones change position, missing ones go", () => {
    const collection = testOrders.children[0]
    const current = [
      { id: "a", order_id: "o", description: "A", quantity: "1.000000", unit_price: "1.000000", subtotal: "1.000000", position: 0 },
      { id: "b", order_id: "o", description: "B", quantity: "1.000000", unit_price: "1.000000", subtotal: "1.000000", position: 1 }
    ]
    const drafts = Result.getOrThrow(applyChildren(collection, [{ id: "a" }, item("N", "1", "1")], current))
    const plan = childPlan(collection, drafts, current)
    expect(plan.update).toEqual([])
    expect(plan.insert.map((row) => row.description)).toEqual(["N"])
    expect(plan.remove).toEqual(["b"])
  })
})
