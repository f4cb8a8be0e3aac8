import type { AnyResource } from "@erp/core"
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { PANEL_CSS, PANEL_JS } from "./assets.js"
import { makeKit } from "./kit.js"
import { makeKeys } from "./keys.js"
import { makeSignIn } from "./sign-in.js"
import { makeOverview } from "./overview.js"
import { makeEventFeed } from "./events.js"
import { makeDeleted } from "./deleted.js"
import { makeRecords } from "./records.js"
import { makeMembers } from "./members.js"
import { makeApps } from "./apps.js"
import { makeReconciliation } from "./reconciliation.js"
import { makeReports } from "./reports.js"

const asset = (body: string, type: string) =>
  Effect.succeed(
    HttpServerResponse.text(body, { contentType: type }).pipe(
      HttpServerResponse.setHeaders({ "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" })
    )
  )

/**
 * Every route of the panel, as `METHOD path`. The layer serves each with its handler (the type
 * check wants one per route), and the hostile-strings test walks this list: a screen added
 * here is rendered with hostile data without a line changed there.
 */
export const PANEL_ROUTES = [
  "GET /panel",
  "GET /panel/assets/panel.css",
  "GET /panel/assets/panel.js",
  "GET /panel/sign-in",
  "POST /panel/sign-in",
  "POST /panel/sign-out",
  "POST /panel/tenant",
  "GET /panel/keys",
  "GET /panel/keys/new",
  "POST /panel/keys",
  "GET /panel/keys/:id/revoke",
  "POST /panel/keys/:id/revoke",
  "GET /panel/members",
  "POST /panel/members",
  "GET /panel/members/:id",
  "POST /panel/members/:id",
  "POST /panel/members/:id/remove",
  "GET /panel/apps",
  "POST /panel/apps/clients",
  "POST /panel/apps/clients/:clientId/rotate",
  "GET /panel/apps/clients/:clientId/revoke",
  "POST /panel/apps/clients/:clientId/revoke",
  "GET /panel/apps/grants/:id/revoke",
  "POST /panel/apps/grants/:id/revoke",
  "GET /panel/events",
  "GET /panel/reports",
  "GET /panel/reports/:report.csv",
  "GET /panel/reports/:report",
  "GET /panel/reconciliation",
  "GET /panel/reconciliation/:account",
  "POST /panel/reconciliation/:account/auto",
  "POST /panel/reconciliation/:account/lines/:line/reconcile",
  "POST /panel/reconciliation/:account/lines/:line/unreconcile",
  "GET /panel/deleted",
  "POST /panel/deleted/:resource/:id/restore",
  "GET /panel/r/:resource",
  "POST /panel/r/:resource",
  "GET /panel/r/:resource/new",
  "GET /panel/r/:resource/:id",
  "POST /panel/r/:resource/:id",
  "GET /panel/r/:resource/:id/delete",
  "POST /panel/r/:resource/:id/delete",
  "POST /panel/r/:resource/:id/actions/:action",
  "POST /panel/r/:resource/:id/test"
] as const

export type PanelRoute = (typeof PANEL_ROUTES)[number]

/** The panel (`/panel`): server-rendered screens for a tenant's people, on the same router as the API. */
export const layerPanelRoutes = (registry: ReadonlyArray<AnyResource>) =>
  HttpRouter.use((router) =>
    Effect.gen(function* () {
      const kit = yield* makeKit(registry)
      const signIn = yield* makeSignIn(kit)
      const keys = makeKeys(kit)
      const deleted = makeDeleted(kit)
      const records = yield* makeRecords(kit)
      const members = makeMembers(kit)
      const apps = makeApps(kit)
      const reports = yield* makeReports(kit)
      const reconciliation = makeReconciliation(kit)
      const handlers = {
        "GET /panel": makeOverview(kit, reports),
        "GET /panel/assets/panel.css": asset(PANEL_CSS, "text/css; charset=utf-8"),
        "GET /panel/assets/panel.js": asset(PANEL_JS, "text/javascript; charset=utf-8"),
        "GET /panel/sign-in": signIn.get,
        "POST /panel/sign-in": signIn.post,
        "POST /panel/sign-out": signIn.signOut,
        "POST /panel/tenant": signIn.switchTenant,
        "GET /panel/keys": keys.list,
        "GET /panel/keys/new": keys.form,
        "POST /panel/keys": keys.create,
        "GET /panel/keys/:id/revoke": keys.confirmRevoke,
        "POST /panel/keys/:id/revoke": keys.revoke,
        "GET /panel/members": members.list,
        "POST /panel/members": members.invite,
        "GET /panel/members/:id": members.edit,
        "POST /panel/members/:id": members.update,
        "POST /panel/members/:id/remove": members.remove,
        "GET /panel/apps": apps.list,
        "POST /panel/apps/clients": apps.createClient,
        "POST /panel/apps/clients/:clientId/rotate": apps.rotate,
        "GET /panel/apps/clients/:clientId/revoke": apps.confirmClient,
        "POST /panel/apps/clients/:clientId/revoke": apps.revokeClient,
        "GET /panel/apps/grants/:id/revoke": apps.confirmGrant,
        "POST /panel/apps/grants/:id/revoke": apps.revokeGrant,
        "GET /panel/events": makeEventFeed(kit),
        "GET /panel/reports": reports.list,
        "GET /panel/reports/:report.csv": reports.csv,
        "GET /panel/reports/:report": reports.show,
        "GET /panel/reconciliation": reconciliation.list,
        "GET /panel/reconciliation/:account": reconciliation.show,
        "POST /panel/reconciliation/:account/auto": reconciliation.auto,
        "POST /panel/reconciliation/:account/lines/:line/reconcile": reconciliation.reconcile,
        "POST /panel/reconciliation/:account/lines/:line/unreconcile": reconciliation.unreconcile,
        "GET /panel/deleted": deleted.list,
        "POST /panel/deleted/:resource/:id/restore": deleted.restore,
        "GET /panel/r/:resource": records.list,
        "POST /panel/r/:resource": records.create,
        "GET /panel/r/:resource/new": records.newForm,
        "GET /panel/r/:resource/:id": records.show,
        "POST /panel/r/:resource/:id": records.update,
        "GET /panel/r/:resource/:id/delete": records.confirmDelete,
        "POST /panel/r/:resource/:id/delete": records.remove,
        "POST /panel/r/:resource/:id/actions/:action": records.runAction,
        "POST /panel/r/:resource/:id/test": records.testEvent
      } satisfies Readonly<Record<PanelRoute, Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, unknown>>>
      for (const route of PANEL_ROUTES) {
        const [method, path] = route.split(" ") as ["GET" | "POST", HttpRouter.PathInput]
        yield* router.add(method, path, handlers[route])
      }
    })
  )
