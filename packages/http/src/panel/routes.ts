import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import type { AnyResource } from "@erp/core"
import { Effect } from "effect"
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

const asset = (body: string, type: string) =>
  Effect.succeed(
    HttpServerResponse.text(body, { contentType: type }).pipe(
      HttpServerResponse.setHeaders({ "cache-control": "public, max-age=300", "x-content-type-options": "nosniff" })
    )
  )

/** The panel (`/panel`): server-rendered screens for a tenant's people, on the same router as the API. */
export const layerPanelRoutes = (registry: ReadonlyArray<AnyResource>) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function* () {
      const kit = yield* makeKit(registry)
      const signIn = yield* makeSignIn(kit)
      const keys = makeKeys(kit)
      const deleted = makeDeleted(kit)
      const records = yield* makeRecords(kit)
      const overview = makeOverview(kit)
      const members = makeMembers(kit)
      const apps = makeApps(kit)
      yield* router.get("/panel", overview)
      yield* router.get("/panel/assets/panel.css", asset(PANEL_CSS, "text/css; charset=utf-8"))
      yield* router.get("/panel/assets/panel.js", asset(PANEL_JS, "text/javascript; charset=utf-8"))
      yield* router.get("/panel/sign-in", signIn.get)
      yield* router.post("/panel/sign-in", signIn.post)
      yield* router.post("/panel/sign-out", signIn.signOut)
      yield* router.post("/panel/tenant", signIn.switchTenant)
      yield* router.get("/panel/keys", keys.list)
      yield* router.get("/panel/keys/new", keys.form)
      yield* router.post("/panel/keys", keys.create)
      yield* router.get("/panel/keys/:id/revoke", keys.confirmRevoke)
      yield* router.post("/panel/keys/:id/revoke", keys.revoke)
      yield* router.get("/panel/members", members.list)
      yield* router.post("/panel/members", members.invite)
      yield* router.get("/panel/members/:id", members.edit)
      yield* router.post("/panel/members/:id", members.update)
      yield* router.post("/panel/members/:id/remove", members.remove)
      yield* router.get("/panel/apps", apps.list)
      yield* router.post("/panel/apps/clients", apps.createClient)
      yield* router.post("/panel/apps/clients/:clientId/rotate", apps.rotate)
      yield* router.get("/panel/apps/clients/:clientId/revoke", apps.confirmClient)
      yield* router.post("/panel/apps/clients/:clientId/revoke", apps.revokeClient)
      yield* router.get("/panel/apps/grants/:id/revoke", apps.confirmGrant)
      yield* router.post("/panel/apps/grants/:id/revoke", apps.revokeGrant)
      yield* router.get("/panel/events", makeEventFeed(kit))
      yield* router.get("/panel/deleted", deleted.list)
      yield* router.post("/panel/deleted/:resource/:id/restore", deleted.restore)
      yield* router.get("/panel/r/:resource", records.list)
      yield* router.post("/panel/r/:resource", records.create)
      yield* router.get("/panel/r/:resource/new", records.newForm)
      yield* router.get("/panel/r/:resource/:id", records.show)
      yield* router.post("/panel/r/:resource/:id", records.update)
      yield* router.get("/panel/r/:resource/:id/delete", records.confirmDelete)
      yield* router.post("/panel/r/:resource/:id/delete", records.remove)
      yield* router.post("/panel/r/:resource/:id/actions/:action", records.runAction)
      yield* router.post("/panel/r/:resource/:id/test", records.testEvent)
    })
  )
