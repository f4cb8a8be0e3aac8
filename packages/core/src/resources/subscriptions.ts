import { Effect, Schema } from "effect"
import { column, id, type ResourceRef, timestamps } from "../engine/field.js"
import { type Draft, defineResource, type RecordType } from "../engine/resource.js"
import { choice, date, datetime, flag, freeText, integer, metadata, money, Problems, reference, text } from "./common.js"
import { customers } from "./customers.js"

const Currency = Schema.String.check(Schema.isPattern(/^[A-Z]{3}$/u, { message: "must be an ISO 4217 code in capitals (BRL, USD)" }))

/**
 * What a tenant sells by subscription: a price per interval (every 1 month, every 12
 * months), an optional trial. Panel only (spec "Events": the event is only a signal).
 */
export const subscriptionPlans = defineResource({
  name: "subscription-plans",
  singular: "subscription-plan",
  title: "Subscription plan",
  description: "A price charged every interval (e.g. 99.90 BRL every 1 month), with an optional trial. Written by the panel; emits events.",
  notFoundCode: "SUBSCRIPTION_PLAN_NOT_FOUND",
  panelOnly: true,
  events: true,
  table: "subscription_plans",
  fields: {
    id: id(),
    name: text(200, { required: true }),
    code: text(64, { nullable: true, description: "The tenant's own code for the plan (unique)" }),
    description: freeText(2000),
    amount: money({ required: true, description: "Price per interval" }),
    currency: column<string, string>({ type: "text", output: Schema.String, inputSchema: Currency, filter: true, description: "ISO 4217 currency (default BRL)" }),
    billing_interval: choice(["day", "week", "month", "year"], { required: true }),
    interval_count: integer({ min: 1, max: 36, description: "Intervals per billing period (default 1)" }),
    trial_days: integer({ min: 0, max: 365, description: "Free days before the first charge (default 0)" }),
    is_active: flag({ description: "Offered to new subscribers (default true)" }),
    metadata: metadata(),
    ...timestamps()
  },
  defaultSort: { field: "created_at", order: "asc" },
  writes: { example: { name: "Pro monthly", code: "pro-monthly", amount: "99.900000", currency: "BRL", billing_interval: "month" } }
})

const STATUSES = ["trialing", "active", "past_due", "paused", "cancelled"] as const

/** Periods in order, and a cancellation that names its moment. */
const subscriptionRules = (draft: Draft<typeof subscriptionFields>) =>
  Effect.gen(function* () {
    const problems = new Problems()
    const start = draft.values.current_period_start
    const end = draft.values.current_period_end
    if (start && end && String(end) < String(start)) problems.add("current_period_end", "is before current_period_start")
    if (problems.any) return yield* problems.fail("The subscription cannot be saved")
    const cancelling = draft.values.status === "cancelled" && draft.current?.status !== "cancelled"
    return cancelling && !draft.values.cancelled_at ? { ...draft, values: { ...draft.values, cancelled_at: new Date().toISOString() } } : draft
  })

/** The fields of a customer subscription, named so that its rules take a draft keyed by them. */
const subscriptionFields = {
  id: id(),
  customer_id: reference((): ResourceRef => customers, { nullable: false, required: true }),
  plan_id: reference((): ResourceRef => subscriptionPlans, { nullable: false, required: true }),
  status: choice(STATUSES, { description: STATUSES.join(", ") + " (default active)" }),
  quantity: integer({ min: 1, max: 1_000_000, description: "Seats or units (default 1)" }),
  current_period_start: date({ nullable: true }),
  current_period_end: date({ nullable: true }),
  trial_ends_at: date({ nullable: true }),
  cancel_at_period_end: flag({ description: "Ends when the current period ends (default false)" }),
  cancelled_at: datetime({ nullable: true, description: "When it was cancelled (set when status becomes cancelled)" }),
  metadata: metadata(),
  ...timestamps()
}

/** A customer's subscription to a plan: its status, the current billing period, a cancellation. Panel only. */
export const customerSubscriptions = defineResource({
  name: "customer-subscriptions",
  singular: "customer-subscription",
  title: "Customer subscription",
  description: "A customer subscribed to a plan: status (trialing, active, past_due, paused, cancelled), the current period, cancellation. Written by the panel; emits events.",
  notFoundCode: "CUSTOMER_SUBSCRIPTION_NOT_FOUND",
  panelOnly: true,
  events: true,
  table: "customer_subscriptions",
  fields: subscriptionFields,
  defaultSort: { field: "created_at", order: "asc" },
  writes: {
    example: { status: "active", quantity: 1, current_period_start: "2026-01-01", current_period_end: "2026-01-31" },
    references: { customer_id: () => customers, plan_id: () => subscriptionPlans }
  },
  rules: subscriptionRules
})

export type SubscriptionPlan = RecordType<typeof subscriptionPlans>
export type CustomerSubscription = RecordType<typeof customerSubscriptions>
