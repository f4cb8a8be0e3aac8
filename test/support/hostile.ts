import { allowedOperators, type AnyResource, OPERATORS, publicResources, allResources } from "@erp/core"
import * as fc from "fast-check"
import * as fs from "node:fs"

/**
 * Hostile requests for every route, driven by the OpenAPI document (routes, path and query
 * parameters, body fields) and the resource registry (filter fields and their operators, example
 * bodies): a route added to either is attacked without a line changed here.
 */

interface OpenApiOperation {
  readonly parameters?: ReadonlyArray<{ readonly name: string; readonly in: string }>
  readonly requestBody?: { readonly content: Record<string, { readonly schema?: { readonly $ref?: string } }> }
}
interface OpenApiDocument {
  readonly paths: Record<string, Record<string, OpenApiOperation>>
  readonly components: { readonly schemas: Record<string, { readonly properties?: Record<string, unknown> }> }
}

export interface HostileRoute {
  readonly method: string
  /** `/products/{id}` */
  readonly template: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  /** Body content type, when the route takes one. */
  readonly bodyType?: string
  /** Field names the body's schema declares. */
  readonly bodyFields: ReadonlyArray<string>
  /** The resource whose route this is (first path segment), for filters and example bodies. */
  readonly resource?: AnyResource
}

/** The OAuth and discovery routes, which the OpenAPI document does not describe. */
const OAUTH_ROUTES: ReadonlyArray<HostileRoute> = [
  { method: "POST", template: "/oauth/token", pathParams: [], queryParams: [], bodyType: "application/x-www-form-urlencoded", bodyFields: ["grant_type", "code", "redirect_uri", "client_id", "client_secret", "code_verifier", "refresh_token", "scope", "resource"] },
  { method: "POST", template: "/oauth/revoke", pathParams: [], queryParams: [], bodyType: "application/x-www-form-urlencoded", bodyFields: ["token", "token_type_hint", "client_id", "client_secret"] },
  { method: "POST", template: "/oauth/register", pathParams: [], queryParams: [], bodyType: "application/json", bodyFields: ["client_name", "redirect_uris", "grant_types", "token_endpoint_auth_method", "scope"] },
  { method: "GET", template: "/oauth/authorize", pathParams: [], queryParams: ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource"], bodyFields: [] },
  { method: "POST", template: "/oauth/authorize", pathParams: [], queryParams: [], bodyType: "application/x-www-form-urlencoded", bodyFields: ["action", "csrf", "email", "password", "client_id", "redirect_uri", "scope", "state", "tenant_id", "decision"] },
  { method: "GET", template: "/oauth/userinfo", pathParams: [], queryParams: [], bodyFields: [] },
  { method: "GET", template: "/.well-known/oauth-authorization-server", pathParams: [], queryParams: [], bodyFields: [] },
  { method: "GET", template: "/.well-known/oauth-protected-resource", pathParams: [], queryParams: [], bodyFields: [] },
  { method: "GET", template: "/openapi.json", pathParams: [], queryParams: [], bodyFields: [] }
]

export const loadOpenApi = (): OpenApiDocument =>
  JSON.parse(fs.readFileSync(new URL("../../packages/http/openapi.json", import.meta.url), "utf8")) as OpenApiDocument

/** Every route of the API and the OAuth server, with what it takes. */
export const hostileRoutes = (document: OpenApiDocument = loadOpenApi(), registry: ReadonlyArray<AnyResource> = allResources): ReadonlyArray<HostileRoute> => {
  const byName = new Map(publicResources(registry).map((resource) => [resource.name, resource]))
  const routes: Array<HostileRoute> = []
  for (const [template, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const parameters = operation.parameters ?? []
      const content = operation.requestBody?.content ?? {}
      const bodyType = Object.keys(content)[0]
      const ref = bodyType ? content[bodyType].schema?.$ref : undefined
      const schema = ref ? document.components.schemas[ref.split("/").pop()!] : undefined
      const resource = byName.get(template.split("/")[1])
      routes.push({
        method: method.toUpperCase(),
        template,
        pathParams: [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]),
        queryParams: parameters.filter((parameter) => parameter.in === "query").map((parameter) => parameter.name),
        ...(bodyType ? { bodyType } : {}),
        bodyFields: Object.keys(schema?.properties ?? {}),
        ...(resource ? { resource } : {})
      })
    }
  }
  return [...routes, ...OAUTH_ROUTES]
}

// ---- Hostile values ----

const PROTOTYPE_NAMES = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "prototype", "__defineGetter__", "isPrototypeOf", "toLocaleString"]

/** Text that once broke something: NUL, lone surrogates, prototype names, long runs, SQL and format look-alikes. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "\u0000", "a\u0000b", "\ud800", "x\udc00", "\udbff\udbff", "\ud83d", "%00", "'; DROP TABLE products; --", "\\", "\"", "%", "_", "*", "$1",
    "2020-01-01T00:00:00+16:00", "2020-01-01T00:00:00-99:99", "9999-12-31T23:59:59+15:59", "0000-00-00", "2020-02-30",
    "2147483648", "-2147483649", "99999999999999999999999999999999999999999", "1e309", "NaN", "Infinity", "-0", "0x10", " ", "",
    "null", "true", "[]", "{}", "\u202e", "\ufeff", "ａ", "İ", "ß", "\r\n", "../../etc/passwd", "<script>", "{{x}}"
  ),
  fc.constantFrom(...PROTOTYPE_NAMES),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.nat({ max: 20_000 }).map((length) => "a".repeat(length)),
  fc.tuple(fc.string({ maxLength: 5 }), fc.constantFrom("\u0000", "\ud800", "\udfff")).map(([text, bad]) => text + bad)
)

const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(2_147_483_648, -2_147_483_649, 2 ** 53 + 1, -1, 0, 1e308, -1e308, 0.1, Number.MAX_SAFE_INTEGER, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true })
)

/** Nested `depth` levels of objects or arrays around a value. */
const nested = (depth: number, kind: "object" | "array", inner: unknown): unknown => {
  let value = inner
  for (let level = 0; level < depth; level++) value = kind === "object" ? { a: value } : [value]
  return value
}

/** A JSON value meant to hurt: deep, wide, prototype-keyed, NUL- and surrogate-laden, out of range. */
export const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileText },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
  { weight: 2, arbitrary: fc.tuple(fc.integer({ min: 20, max: 3_000 }), fc.constantFrom("object" as const, "array" as const)).map(([depth, kind]) => nested(depth, kind, 1)) },
  { weight: 1, arbitrary: fc.integer({ min: 900, max: 20_000 }).map((length) => Array.from({ length }, () => ({}))) },
  { weight: 2, arbitrary: fc.dictionary(fc.oneof(fc.constantFrom(...PROTOTYPE_NAMES), hostileText), hostileText, { maxKeys: 4 }) },
  { weight: 2, arbitrary: fc.array(hostileText, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) }
)

// ---- Requests ----

export interface HostileRequest {
  readonly route: HostileRoute
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: string
}

/** Known ids to put in paths now and then, so handlers past the id check are reached. */
export type KnownIds = Readonly<Record<string, ReadonlyArray<string>>>

const encode = (text: string): string => {
  try {
    return encodeURIComponent(text)
  } catch {
    // A lone surrogate cannot be UTF-8 encoded: sent as the raw escape the client would write.
    return [...text].map((char) => (/[A-Za-z0-9]/.test(char) ? char : `%${char.charCodeAt(0).toString(16).padStart(2, "0")}`)).join("")
  }
}

const pathValue = (route: HostileRoute, name: string, known: KnownIds): fc.Arbitrary<string> => {
  const ids = route.resource ? known[route.resource.name] ?? [] : []
  return fc.oneof(
    ...(ids.length > 0 ? [{ weight: 3, arbitrary: fc.constantFrom(...ids) }] : []),
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom("2147483648", "2147483647", "0", "-1", "1", "99999999999", "BR", "USA", "SP", "11222333000181") },
    { weight: 2, arbitrary: hostileText.filter((text) => text.length < 300) },
    { weight: 1, arbitrary: fc.constant(name) }
  )
}

/** Query pairs: filters in bracket form from the registry, the JSON form, the list parameters, and nonsense. */
const queryPairs = (route: HostileRoute): fc.Arbitrary<ReadonlyArray<readonly [string, string]>> => {
  const filters = Object.entries(route.resource?.filters ?? {})
  const fieldNames = filters.map(([name]) => name)
  const bracket: fc.Arbitrary<readonly [string, string]> = filters.length === 0
    ? fc.tuple(hostileText, hostileText)
    : fc.tuple(
      fc.constantFrom(...filters),
      fc.oneof(fc.constant(undefined), fc.constantFrom(...OPERATORS), hostileText.filter((text) => text.length < 50)),
      fc.oneof(hostileText, fc.constantFrom("true", "false", "2020-01-01", "10", "x"))
    ).map(([[name, field], op, value]) => [op === undefined ? name : `${name}[${op ?? allowedOperators(field)[0]}]`, value] as const)
  const jsonFilter = fc.oneof(
    fc.constant("{"),
    hostileJson.map((value) => JSON.stringify(value)),
    fc.array(
      fc.record({ f: fieldNames.length > 0 ? fc.oneof(fc.constantFrom(...fieldNames), hostileText) : hostileText, op: fc.oneof(fc.constantFrom(...OPERATORS), hostileText), v: hostileJson }),
      { maxLength: 60 }
    ).map((conditions) => JSON.stringify({ logic: "and", conditions }))
  ).map((text) => ["filter", text] as const)
  const listParameter = fc.tuple(
    fc.constantFrom("limit", "cursor", "sort", "search", "with_deleted", "include_payload_search", "q", ...route.queryParams),
    fc.oneof(hostileText, fc.constantFrom("100", "101", "0", "-1", "name:asc", "created_at:desc", "eyJ4IjoxfQ", "true"))
  )
  return fc.oneof(
    { weight: 2, arbitrary: fc.array(fc.oneof(bracket, listParameter), { maxLength: 8 }) },
    { weight: 1, arbitrary: fc.tuple(jsonFilter, fc.array(bracket, { maxLength: 3 })).map(([json, rest]) => [json, ...rest]) },
    // Over the caps: many conditions at once (kept under Node's 16 KiB of headers).
    { weight: 1, arbitrary: fc.integer({ min: 40, max: 300 }).chain((count) => fc.array(bracket.map(([key, value]) => [key, value.slice(0, 20)] as const), { minLength: count, maxLength: count })) }
  )
}

/** A body: the resource's example with hostile changes, hostile JSON, broken JSON, or a hostile form. */
const bodyOf = (route: HostileRoute): fc.Arbitrary<string | undefined> => {
  // GET and HEAD cannot carry a body (fetch refuses to send one).
  if (route.method === "GET" || route.method === "HEAD") return fc.constant(undefined)
  if (!route.bodyType) return fc.oneof(fc.constant(undefined), fc.constant(undefined), hostileText.map((text) => JSON.stringify({ x: text })))
  if (route.bodyType === "application/x-www-form-urlencoded") {
    return fc.array(fc.tuple(fc.oneof(fc.constantFrom(...route.bodyFields), hostileText), fc.oneof(hostileText, fc.constantFrom("authorization_code", "refresh_token", "client_credentials"))), { maxLength: 8 })
      .map((pairs) => pairs.map(([name, value]) => `${encode(name)}=${encode(value)}`).join("&"))
  }
  if (route.bodyType !== "application/json") {
    return fc.oneof(hostileText, fc.constant("<OFX><BANKTRANLIST>"), fc.constant(""))
  }
  const example = (route.resource?.write?.example ?? {}) as Record<string, unknown>
  const fields = route.bodyFields.length > 0 ? route.bodyFields : ["name"]
  const mutated = fc.tuple(
    fc.array(fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...fields) }, { weight: 1, arbitrary: fc.constantFrom(...PROTOTYPE_NAMES) }, { weight: 1, arbitrary: hostileText }), hostileJson), { minLength: 1, maxLength: 4 })
  ).map(([changes]) => {
    // Written as JSON text by hand so `__proto__` stays a key, as a client would send it.
    const entries = [...Object.entries(example).filter(([name]) => !changes.some(([changed]) => changed === name)), ...changes]
    return `{${entries.map(([name, value]) => `${JSON.stringify(name)}:${JSON.stringify(value) ?? "null"}`).join(",")}}`
  })
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 1, arbitrary: hostileJson.map((value) => JSON.stringify(value) ?? "null") },
    { weight: 1, arbitrary: fc.constantFrom("{", "[", '{"a":', "\u0000", "", "null", "1e99999", `${"[".repeat(100_000)}${"]".repeat(100_000)}`, `${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}`) }
  )
}

/** One hostile request for a route, with the caller's token most of the time. */
export const hostileRequest = (routes: ReadonlyArray<HostileRoute>, token: string, known: KnownIds): fc.Arbitrary<HostileRequest> =>
  fc.constantFrom(...routes).chain((route) =>
    fc.record({
      path: fc.tuple(...route.pathParams.map((name) => pathValue(route, name, known))).map((values) =>
        route.pathParams.reduce((path, name, index) => path.replace(`{${name}}`, encode(values[index])), route.template)),
      query: queryPairs(route),
      body: bodyOf(route),
      auth: fc.oneof(
        { weight: 8, arbitrary: fc.constant(`Bearer ${token}`) },
        { weight: 1, arbitrary: fc.constantFrom("", "Bearer ", "Bearer sk_x_y", "Basic \u0000", `Bearer ${token}\u0000`, "Bearer eyJhbGciOiJub25lIn0.e30.") }
      ),
      extra: fc.oneof(
        { weight: 6, arbitrary: fc.constant({}) },
        { weight: 1, arbitrary: fc.record({ "api-version": fc.constantFrom("v1", "v2", "", "v1\u0000".replace("\u0000", "")) }) },
        { weight: 1, arbitrary: fc.record({ "x-tenant-id": fc.oneof(fc.uuid(), fc.constantFrom("x", "00000000-0000-0000-0000-000000000000")) }) }
      )
    }).map(({ path, query, body, auth, extra }) => {
      // Long enough to hurt, short enough that most requests fit Node's 16 KiB of headers (431 otherwise).
      const search = query.map(([key, value]) => `${encode(key.slice(0, 200))}=${encode(value.slice(0, 1_500))}`).join("&")
      const headers: Record<string, string> = { ...extra }
      // Header values cannot carry NUL or non-Latin-1 text over HTTP/1.1: such a client cannot even send them.
      if (auth && /^[\x20-\x7e]*$/.test(auth)) headers.authorization = auth
      if (body !== undefined) headers["content-type"] = route.bodyType ?? "application/json"
      const request: HostileRequest = { route, method: route.method, path: search ? `${path}?${search}` : path, headers, ...(body !== undefined ? { body } : {}) }
      // fast-check prints a failing case with this: the request, not the route's whole declaration.
      return Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) })
    })
  )

/** How a request is shown in a failure: enough to replay it with curl. */
export const describeRequest = (request: HostileRequest): string =>
  `${request.method} ${request.path.slice(0, 500)}${request.body === undefined ? "" : ` body(${request.body.length}): ${request.body.slice(0, 300)}`}`
