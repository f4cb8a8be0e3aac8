import type * as SqlClient from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import type { EventAction, WriteOrigin } from "../engine/unit-of-work.js"

/**
 * One webhook delivery per enabled endpoint of the tenant subscribed to the events of the
 * common table expression `event` (its rows as `INSERT INTO events … RETURNING` gives them):
 * in the event's statement, so an event and its deliveries commit together.
 */
export const deliveriesOfEvents = (sql: SqlClient.SqlClient): Fragment =>
  sql`INSERT INTO webhook_deliveries (tenant_id, endpoint_id, event_id, event_type, resource, resource_id, action, event_created_at)
    SELECT e.tenant_id, w.id, e.id, e.type, e.resource, e.resource_id, e.action, e.created_at
    FROM event e JOIN webhook_endpoints w
      ON w.tenant_id = e.tenant_id AND w.enabled AND w.deleted_at IS NULL
      AND jsonb_exists_any(w.events, ARRAY['*', e.type, e.resource || '.*'])`

/** The columns of an event row that its deliveries copy. */
export const EVENT_RETURNING = "tenant_id, id, type, resource, resource_id, action, created_at"

/**
 * The event of each row of the common table expression `written` (a write's `RETURNING`
 * with an `id`), as the `event` expression `deliveriesOfEvents` reads.
 */
export const eventsOfWritten = (sql: SqlClient.SqlClient, origin: WriteOrigin, resource: string, action: EventAction): Fragment =>
  sql`INSERT INTO events (tenant_id, type, resource, resource_id, action, actor_kind, actor_id)
    SELECT ${origin.tenantId}::uuid, ${`${resource}.${action}`}, ${resource}, written.id::text, ${action}, ${origin.actor.kind}, ${origin.actor.id}
    FROM written
    RETURNING ${sql.literal(EVENT_RETURNING)}`
