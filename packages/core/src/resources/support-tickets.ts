import { Schema } from "effect"
import { children } from "../engine/children.js"
import { column, id, type ResourceRef, stored, timestamp, timestamps } from "../engine/field.js"
import { defineResource, type RecordType } from "../engine/resource.js"
import { choice, Email, flag, freeText, integer, metadata, reference, tags, text, Uuid } from "./common.js"
import { customers } from "./customers.js"

const messageFields = {
  id: id(),
  support_ticket_id: stored("uuid", Schema.String),
  author_kind: choice(["customer", "agent", "system"], { required: true, description: "Who wrote it" }),
  author_name: text(200, { nullable: true }),
  author_email: column<string, string, true>({ type: "text", output: Schema.String, inputSchema: Email, nullable: true }),
  body: text(20_000, { required: true }),
  is_internal: flag({ description: "A note agents see and the customer does not (default false)" }),
  created_at: timestamp(),
  updated_at: timestamp()
}

const attachmentFields = {
  id: id(),
  support_ticket_id: stored("uuid", Schema.String),
  message_id: column<string, string, true>({ type: "uuid", output: Schema.String, inputSchema: Uuid, nullable: true, description: "The message it came with, if any" }),
  file_name: text(255, { required: true }),
  content_type: text(255, { required: true }),
  size_bytes: integer({ required: true, max: 2_147_483_647 }),
  url: text(2048, { required: true, description: "Where the panel stored the file" }),
  created_at: timestamp(),
  updated_at: timestamp()
}

/**
 * A help-desk ticket with its conversation: messages and attachments are child
 * collections, so a new message (or attachment) is the ticket's `update` (spec "Events",
 * rule 1). Panel only.
 */
export const supportTickets = defineResource({
  name: "support-tickets",
  singular: "support-ticket",
  title: "Support ticket",
  description: "A help-desk ticket: subject, status, priority, requester, assignee, messages and attachments. Written by the panel; emits events " +
    "(a new message or attachment is support-tickets.update).",
  notFoundCode: "SUPPORT_TICKET_NOT_FOUND",
  panelOnly: true,
  events: true,
  table: "support_tickets",
  fields: {
    id: id(),
    ticket_number: stored("integer", Schema.Int, { filter: { sortable: true }, description: "Per-tenant sequence" }),
    subject: text(300, { required: true }),
    status: choice(["open", "pending", "on_hold", "solved", "closed"], { description: "open (default), pending (waiting on the customer), on_hold, solved, closed" }),
    priority: choice(["low", "normal", "high", "urgent"], { description: "default normal" }),
    channel: choice(["email", "web", "phone", "chat", "api"], { description: "Where it came from (default web)" }),
    customer_id: reference((): ResourceRef => customers),
    requester_email: column<string, string, true>({ type: "text", output: Schema.String, inputSchema: Email, nullable: true, filter: true }),
    assignee_user_id: column<string, string, true>({ type: "uuid", output: Schema.String, inputSchema: Uuid, nullable: true, filter: true, description: "The agent (a user of the tenant)" }),
    tags: tags(),
    description: freeText(5000),
    messages: children({
      table: "support_ticket_messages",
      parentKey: "support_ticket_id",
      fields: messageFields,
      identifier: "SupportTicketMessage",
      maxItems: 1000,
      description: "The conversation, oldest first; PATCH sends the complete new list (existing ones by id)"
    }),
    attachments: children({
      table: "support_ticket_attachments",
      parentKey: "support_ticket_id",
      fields: attachmentFields,
      identifier: "SupportTicketAttachment",
      maxItems: 200,
      description: "Files of the ticket (stored by the panel; their URLs here)"
    }),
    metadata: metadata(),
    ...timestamps()
  },
  defaultSort: { field: "created_at", order: "asc" },
  numbering: { field: "ticket_number" },
  writes: {
    example: {
      subject: "Invoice not received",
      priority: "high",
      requester_email: "ana@example.com",
      messages: [{ author_kind: "customer", author_name: "Ana", body: "I did not get the invoice for March." }]
    }
  }
})

export type SupportTicket = RecordType<typeof supportTickets>
