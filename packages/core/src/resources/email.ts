import { Effect, Schema } from "effect"
import { column, id, type ResourceRef, timestamps } from "../engine/field.js"
import { type Draft, defineResource, type RecordType } from "../engine/resource.js"
import { choice, datetime, Email, flag, freeText, metadata, reference, text } from "./common.js"

const emailColumn = <N extends boolean = false>(options: { readonly required?: boolean; readonly nullable?: N; readonly description?: string; readonly input?: "both" | "create" } = {}) =>
  column<string, string, N>({ type: "text", output: Schema.String, inputSchema: Email, filter: true, ...options })

/** The domain of an address, lower case: what the provider verifies. */
const withDomain = (draft: Draft<typeof identityFields>) =>
  Effect.succeed(
    typeof draft.values.email === "string"
      ? { ...draft, values: { ...draft.values, domain: draft.values.email.split("@")[1]!.toLowerCase() } }
      : draft
  )

/** The fields of an email identity, named so that its rules take a draft keyed by them. */
const identityFields = {
  id: id(),
  email: emailColumn({ required: true, input: "create", description: "The sender address" }),
  domain: column<string, never>({ type: "text", output: Schema.String, input: false, filter: true, description: "The address's domain (set from email)" }),
  display_name: text(200, { nullable: true }),
  reply_to: emailColumn({ nullable: true }),
  status: choice(["pending_verification", "verified", "failed"], { description: "pending_verification (default), verified, failed" }),
  verified_at: datetime({ nullable: true }),
  is_default: flag({ description: "Used when a dispatch names no identity (default false)" }),
  metadata: metadata(),
  ...timestamps()
}

/** An address the tenant sends email from, once its domain is verified with the email provider. Panel only. */
export const tenantEmailIdentities = defineResource({
  name: "tenant-email-identities",
  singular: "tenant-email-identity",
  title: "Tenant email identity",
  description: "A sender address of the tenant (\"Acme Billing <billing@acme.com>\"), its verification with the email provider, a default. Written by the panel; emits events.",
  notFoundCode: "TENANT_EMAIL_IDENTITY_NOT_FOUND",
  panelOnly: true,
  events: true,
  table: "tenant_email_identities",
  fields: identityFields,
  defaultSort: { field: "created_at", order: "asc" },
  writes: { example: { email: "billing@acme.example", display_name: "Acme Billing" } },
  rules: withDomain
})

/** One email the tenant sent (an invoice, a dunning notice, a ticket reply) and what became of it. Panel only. */
export const emailDispatches = defineResource({
  name: "email-dispatches",
  singular: "email-dispatch",
  title: "Email dispatch",
  description: "An email sent for the tenant: recipient, subject, template, the sender identity, what it was about, and its status " +
    "(queued, sent, delivered, opened, bounced, failed). Written by the panel; emits events.",
  notFoundCode: "EMAIL_DISPATCH_NOT_FOUND",
  panelOnly: true,
  events: true,
  table: "email_dispatches",
  fields: {
    id: id(),
    identity_id: reference((): ResourceRef => tenantEmailIdentities, { description: "The sender identity" }),
    to_email: emailColumn({ required: true }),
    to_name: text(200, { nullable: true }),
    subject: text(500, { required: true }),
    template: text(100, { nullable: true, description: "The template's key, e.g. invoice_issued" }),
    related_resource: text(64, { nullable: true, description: "What it is about: a resource name (invoices, support-tickets)" }),
    related_id: text(64, { nullable: true, description: "… and that record's id" }),
    status: choice(["queued", "sent", "delivered", "opened", "bounced", "failed"], { description: "queued (default), sent, delivered, opened, bounced, failed" }),
    provider_message_id: text(255, { nullable: true }),
    sent_at: datetime({ nullable: true }),
    delivered_at: datetime({ nullable: true }),
    error_message: freeText(2000),
    metadata: metadata(),
    ...timestamps()
  },
  defaultSort: { field: "created_at", order: "asc" },
  writes: { example: { to_email: "ana@example.com", subject: "Your invoice", template: "invoice_issued" } }
})

export type TenantEmailIdentity = RecordType<typeof tenantEmailIdentities>
export type EmailDispatch = RecordType<typeof emailDispatches>
