import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import * as fs from "node:fs"
import { html, htmlResponse } from "./html.js"

/**
 * Everything the page loads comes from this host (the reference's bundle, copied from the
 * `@scalar/api-reference` package at build, the document from `/openapi.json`): it works offline,
 * and the policy lets nothing else in. Styles are inline (the bundle injects them), fonts
 * and images may be data URLs; `connect-src 'self'` is what "Test request" calls.
 */
export const DOCS_CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/**
 * Paths are relative to the page (`/docs`, or `/erp/docs` under a base path), so the
 * same page works wherever the API is mounted.
 */
const PAGE = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>erp Integrations API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="erp-docs"></div>
<script src="docs/scalar.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`

/**
 * Mounts the reference on the document served beside it. The server "Test request" calls
 * is the page's own base (where `/openapi.json` is), never a remote one: no proxy, no
 * fonts or telemetry from elsewhere.
 */
const INIT = `"use strict";
(function () {
  var base = new URL(".", window.location.href).href.replace(/\\/$/, "");
  window.Scalar.createApiReference("#erp-docs", {
    url: base + "/openapi.json",
    servers: [{ url: base, description: "This host" }],
    withDefaultFonts: false,
    // The bundle's own fonts come from a CDN: system fonts instead, so nothing leaves the host.
    customCss: ":root, .scalar-app { --scalar-font: system-ui, sans-serif; --scalar-font-code: ui-monospace, monospace; }",
    // The AI agent and its API registry are remote services.
    agent: { disabled: true },
    hideClientButton: false,
    showDeveloperTools: "never",
    telemetry: false,
    authentication: { preferredSecurityScheme: "authorization" },
    defaultOpenAllTags: false,
    metaData: { title: "erp Integrations API reference" }
  });
})();
`

let bundle: string | undefined
/**
 * Scalar's standalone bundle (one self-contained script that defines `window.Scalar`), read once.
 * The build copies it from the `@scalar/api-reference` dev dependency into this package's
 * `assets/` (scripts/copy-scalar.mjs), found from `src/` and `dist/` alike.
 */
const scalarBundle = (): string => {
  bundle ??= fs.readFileSync(new URL("../assets/scalar/standalone.js", import.meta.url), "utf8")
  return bundle
}

const text = (body: string, contentType: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(body, { contentType, headers: { "x-content-type-options": "nosniff", ...headers } })

/** `GET /docs`: the interactive API reference (Scalar) over this host's own OpenAPI document. */
export const layerDocsRoutes = HttpRouter.use((router) =>
  Effect.gen(function* () {
    yield* router.add("GET", "/docs", Effect.sync(() => htmlResponse(PAGE, {
      headers: { "content-security-policy": DOCS_CONTENT_SECURITY_POLICY, "cache-control": "no-cache", "x-content-type-options": "nosniff" }
    })))
    yield* router.add("GET", "/docs/init.js", Effect.sync(() => text(INIT, "text/javascript; charset=utf-8", { "cache-control": "no-cache" })))
    yield* router.add("GET", "/docs/scalar.js", Effect.sync(() => text(scalarBundle(), "text/javascript; charset=utf-8", { "cache-control": "public, max-age=86400" })))
  })
)
