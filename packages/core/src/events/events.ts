import { Schema } from "effect"
import { id, stored, timestamp } from "../engine/field.js"
import { defineResource } from "../engine/resource.js"

/** How long the change feed keeps events. */
export const EVENT_RETENTION_DAYS = 30

/**
 * The change feed: one event per write of a subscribable resource, newest last,
 * paged like every list. Events are written by the unit of work, never by clients.
 */
export const events = defineResource({
  name: "events",
  singular: "event",
  title: "Event",
  description:
    `The tenant's change feed: one event per create, update, delete or restore of a subscribable record, kept ${EVENT_RETENTION_DAYS} days. ` +
    "An event names the record, not its content: fetch it with GET /<resource>/{id} (with_deleted=true after a delete).",
  notFoundCode: "EVENT_NOT_FOUND",
  table: "events",
  softDelete: false,
  fields: {
    id: id(),
    type: stored("text", Schema.String, { filter: true, description: "<resource>.<action>, e.g. products.update" }),
    resource: stored("text", Schema.String, { filter: true }),
    resource_id: stored("text", Schema.String, { filter: true, description: "Id of the record the event is about" }),
    action: stored("text", Schema.Literals(["create", "update", "delete", "restore", "disabled"]), {
      filter: true,
      description: "create, update, delete, restore; disabled for webhook_endpoint.disabled (the server turned an endpoint off)"
    }),
    tenant_id: stored("uuid", Schema.String),
    created_at: timestamp()
  },
  defaultSort: { field: "created_at", order: "asc" }
})
