import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, SERVER_ERRORS } from "./errors.js"

export const SUPPORTED_VERSIONS = ["v1"] as const
export const CURRENT_VERSION = "v1"

/** One dated contract change inside a version (additions are listed too: a client may rely on them). */
export interface ChangelogEntry {
  /** Year and month, `2026-08`. */
  readonly date: string
  readonly version: (typeof SUPPORTED_VERSIONS)[number]
  readonly change: string
}

/**
 * The changelog of v1, oldest first. The README carries the same table (a test compares
 * them), so a change is written here once and copied there.
 */
export const CHANGELOG: ReadonlyArray<ChangelogEntry> = [
  {
    date: "2026-08",
    version: "v1",
    change:
      "The `customer` object embedded in `GET /quotes` and `GET /quotes/{id}` has only `id`, `legal_name`, `trade_name`, `tax_id`; " +
      "the other customer fields left the embed. `customer_id` is unchanged; the full record comes from `GET /customers/{id}` (or `expand[]=customer`)."
  },
  {
    date: "2026-11",
    version: "v1",
    change:
      "Added: `expand[]` on get and list (full records instead of embeds, where declared), `GET /versions`, the interactive reference at `GET /docs`, `Idempotency-Key` on POST and PATCH, `ETag` with `If-Match` (412) and `If-None-Match` (304), per-credential rate limits with `RateLimit-*` headers on every authenticated answer, and the tenant admins' panel at `/panel`."
  }
]

export const VersionInfo = Schema.Struct({
  version: Schema.Literals(SUPPORTED_VERSIONS),
  current: Schema.Boolean,
  default: Schema.Boolean.annotate({ description: "Used when a request sends no `api-version` header" })
}).annotate({ identifier: "ApiVersion" })

export const Versions = Schema.Struct({
  current: Schema.Literal(CURRENT_VERSION),
  versions: Schema.Array(VersionInfo),
  changelog: Schema.Array(
    Schema.Struct({
      date: Schema.String.annotate({ description: "Year and month of the change", examples: ["2026-08"] }),
      version: Schema.Literals(SUPPORTED_VERSIONS),
      change: Schema.String
    }).annotate({ identifier: "ChangelogEntry" })
  )
}).annotate({ identifier: "Versions" })

export const versionsBody = (): typeof Versions.Type => ({
  current: CURRENT_VERSION,
  versions: SUPPORTED_VERSIONS.map((version) => ({ version, current: version === CURRENT_VERSION, default: version === CURRENT_VERSION })),
  changelog: CHANGELOG.map((entry) => ({ ...entry }))
})

export class VersionsGroup extends HttpApiGroup.make("versions")
  .add(
    HttpApiEndpoint.get("versions", "/versions", { success: Versions, error: [BadRequest, ...SERVER_ERRORS] })
      .annotate(OpenApi.Summary, "API versions and changelog")
      .annotate(
        OpenApi.Description,
        "The versions the `api-version` header accepts (`v1`, current and default) and the dated changes made inside them. No credentials needed."
      )
  )
  .annotate(OpenApi.Description, "Versions of the contract and its changelog.") {}
