import { allResources, type AnyResource, asOperator, OAuth, type Principal, ResourceEngine, Tenancy, type Tenant } from "@erp/core"
import { Effect, Result } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { exampleBody } from "../../../test/support/examples.js"
import { startTestHost, type TestHost } from "../../../test/support/host.js"
import {
  authorizationUrl,
  FormSession,
  hiddenFieldsOf,
  makePkce,
  obtainTokens,
  type OAuthTestClient,
  type OAuthTestUser,
  type PlainResponse,
  TEST_PASSWORD,
  TEST_REDIRECT_URI
} from "../../../test/support/oauth.js"
import { formsOf, HOSTILE, HOSTILE_SHORT, invalidFieldsOf, linksOf, type PageForm, pageProblems, pageStrings } from "../../../test/support/pages.js"
import { storeKinds, testStore } from "../../../test/support/stores.js"
import { tenantResources } from "../src/panel/display.js"
import { createFields, valuesOf } from "../src/panel/record-form.js"
import { PANEL_ROUTES, type PanelRoute } from "../src/panel/routes.js"

type Row = Readonly<Record<string, unknown>>

/** Payloads a string field is tried with, longest first; past the last, the example's own value. */
const PAYLOADS = [HOSTILE, ...HOSTILE_SHORT]

/** The route a request reaches and its parameters (a static segment wins over a parameter, as in the router). */
const routeOf = (method: string, pathname: string): { route: PanelRoute; params: Record<string, string> } | undefined => {
  const matches = PANEL_ROUTES.flatMap((route) => {
    const [routeMethod, template] = route.split(" ")
    if (routeMethod !== method) return []
    const names: Array<string> = []
    const pattern = new RegExp(`^${template.replace(/:([a-zA-Z]+)/g, (_, name: string) => (names.push(name), "([^/]+)"))}$`)
    const found = pattern.exec(pathname)
    return found ? [{ route, params: Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(found[index + 1])])) }] : []
  })
  return matches.sort((a, b) => Object.keys(a.params).length - Object.keys(b.params).length)[0]
}

/** Forms whose post ends something: sent after every other, so the screens they end are seen first. */
const sentLast = (route: PanelRoute) =>
  route === "POST /panel/sign-out" ? 3 : route === "POST /panel/tenant" ? 2 : /\/(delete|revoke|remove|restore)$/.test(route) ? 1 : 0

/**
 * Every screen of the panel and every OAuth page, over real HTTP against a started host, with
 * hostile strings in every field a person can set: stored (records of every resource, keys,
 * members, companies, OAuth clients) and sent (every form of every screen, posted with them).
 * The panel is walked from its first page by its own links and forms; the walk must reach
 * every route of `PANEL_ROUTES` and every resource and action of the registry, so a screen
 * added there is attacked here without a line changed. Each page is parsed as a browser parses
 * it and must hold no element, attribute, script or off-site link made from the strings.
 */
describe.each(storeKinds)("every page with hostile strings on %s", (kind) => {
  let host: TestHost
  let tenant: Tenant
  let admin: OAuthTestUser
  /** Resource name to the id of its record holding hostile strings. */
  const seeded = new Map<string, string>()
  /** Resource name to the stored record's fields holding one. */
  const hostileFields = new Map<string, ReadonlyArray<string>>()

  const run: TestHost["run"] = (effect) => host.run(effect)

  /** A user, hostile where the store takes it (the name always; the email when it passes the email check). */
  const hostileUser = async (memberships: ReadonlyArray<{ tenantId: string; role: "admin" | "member" }>): Promise<OAuthTestUser> =>
    run(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const oauth = yield* OAuth
      const made = yield* tenancy.createUser({ email: `"><svg/onload=alert(1)>'${randomUUID().slice(0, 8)}@example.com`, name: HOSTILE }).pipe(
        Effect.catch(() => tenancy.createUser({ email: `user-${randomUUID()}@example.com`, name: HOSTILE }))
      )
      for (const membership of memberships) {
        yield* tenancy.addMember({ tenantId: membership.tenantId, userId: made.id, role: membership.role, permissions: membership.role === "member" ? [{ resource_code: "*", can_read: true, can_create: false, can_update: false, can_delete: false }] : [] })
      }
      yield* oauth.setPassword(made.id, TEST_PASSWORD)
      return { id: made.id, email: made.email, name: made.name, password: TEST_PASSWORD }
    }).pipe(Effect.orDie))

  /** A record another one names: made from its example, or (its unique code taken by an earlier one) one already there. */
  const reference = (principal: Principal) => (target: AnyResource, body: Record<string, unknown>) =>
    run(Effect.gen(function* () {
      const engine = yield* ResourceEngine
      const made = yield* engine.create(target, principal, body).pipe(Effect.catch(() => Effect.map(engine.list(target, principal, [["limit", "1"]]), (page) => page.data[0] as Row)))
      return { id: String(made.id) }
    }).pipe(Effect.orDie))

  /**
   * A record of `resource` with a payload in every string field its rules take: from the declared
   * example, each string replaced by the longest payload; a field the engine refuses gets the next
   * shorter one, and at last its example value back.
   */
  const seedRecord = async (resource: AnyResource, principal: Principal): Promise<Row | undefined> => {
    const example: Record<string, unknown> = await exampleBody(resource, reference(principal))
    // The optional fields the example leaves out are fields a person can set too.
    const added = new Set<string>()
    for (const field of createFields(resource)) {
      if (field.name in example) continue
      const value = field.input.kind === "text" ? HOSTILE : field.input.kind === "lines" ? [HOSTILE] : field.name === "metadata" ? {} : undefined
      if (value === undefined) continue
      example[field.name] = value
      added.add(field.name)
    }
    const stage = new Map<string, number>()
    const whole = new Set<string>()
    const build = (value: unknown, path: string): unknown => {
      if (whole.has(path)) return added.has(path) ? undefined : value
      if (typeof value === "string") return PAYLOADS[stage.get(path) ?? 0] ?? (added.has(path.split(".")[0]) ? undefined : value)
      if (Array.isArray(value)) return value.map((item, index) => build(item, `${path}.${index}`)).filter((item) => item !== undefined)
      if (value !== null && typeof value === "object") {
        const entries = Object.entries(value).map(([name, item]) => [name, build(item, path ? `${path}.${name}` : name)]).filter(([, item]) => item !== undefined)
        // A free map (metadata) takes a hostile key as well.
        return Object.fromEntries(path.endsWith("metadata") ? [...entries, [HOSTILE_SHORT[0], HOSTILE]] : entries)
      }
      return value
    }
    const leaves = (value: unknown, path: string): Array<string> =>
      typeof value === "string" ? [path]
        : Array.isArray(value) ? value.flatMap((item, index) => leaves(item, `${path}.${index}`))
        : value !== null && typeof value === "object" ? Object.entries(value).flatMap(([name, item]) => leaves(item, path ? `${path}.${name}` : name))
        : []
    const allLeaves = leaves(example, "")
    for (let attempt = 0; attempt < 3 * PAYLOADS.length; attempt++) {
      const made = await run(Effect.flatMap(ResourceEngine, (engine) => engine.create(resource, principal, build(example, ""))).pipe(Effect.result))
      if (Result.isSuccess(made)) return made.success
      const refused = Object.keys(("fields" in made.failure ? made.failure.fields : undefined) ?? {}).map((path) => path.replace(/\[(\d+)\]/g, ".$1"))
      if (refused.length === 0) refused.push("")
      for (const path of refused) {
        const under = allLeaves.filter((leaf) => leaf === path || leaf.startsWith(`${path}.`) || path === "")
        if (under.length === 0) whole.add(path)
        for (const leaf of under) stage.set(leaf, (stage.get(leaf) ?? 0) + 1)
      }
    }
    return undefined
  }

  /** An OAuth client of the company, named with the string. */
  const hostileClient = async (): Promise<OAuthTestClient> => {
    const { client, secret } = await run(Effect.flatMap(OAuth, (oauth) =>
      oauth.createClient({ name: HOSTILE, redirectUris: [TEST_REDIRECT_URI], kind: "confidential", registration: "operator", tenantId: tenant.id })).pipe(Effect.orDie))
    return { client, clientId: client.client_id, secret, redirectUri: TEST_REDIRECT_URI, auth: "client_secret_basic" }
  }

  beforeAll(async () => {
    host = await startTestHost(testStore(kind))
    const made = await run(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      const companies = [yield* tenancy.createTenant({ name: HOSTILE, countryCode: "BR" }), yield* tenancy.createTenant({ name: HOSTILE_SHORT[0], countryCode: "US" })]
      for (const company of companies) yield* tenancy.setRateLimit(company.id, 1_000_000)
      return companies
    }).pipe(Effect.orDie))
    tenant = made[0]
    admin = await hostileUser(made.map((company) => ({ tenantId: company.id, role: "admin" as const })))
    await hostileUser([{ tenantId: tenant.id, role: "member" }])
    const principal = asOperator(tenant, "hostile-strings")
    for (const resource of tenantResources(allResources).filter((item) => item.write !== undefined)) {
      const record = await seedRecord(resource, principal)
      if (!record) continue
      seeded.set(resource.name, String(record.id))
      hostileFields.set(resource.name, Object.entries(record).filter(([, value]) => JSON.stringify(value ?? "").includes("alert(1)")).map(([name]) => name))
      // A second one, deleted, for the deleted records screen.
      const gone = await seedRecord(resource, principal)
      if (gone && resource.softDelete !== false) await run(Effect.flatMap(ResourceEngine, (engine) => engine.remove(resource, principal, String(gone.id))).pipe(Effect.orDie))
    }
    await run(Effect.gen(function* () {
      const tenancy = yield* Tenancy
      // One key about to expire, so the overview lists it.
      yield* tenancy.createApiKey({ tenantId: tenant.id, name: HOSTILE, description: HOSTILE, permissions: [{ resource_code: "*", can_read: true, can_create: true, can_update: false, can_delete: false }], expiresAt: new Date(Date.now() + 3 * 86_400_000).toISOString().slice(0, 10) })
    }).pipe(Effect.orDie))
    // The company's own client (listed on its apps screen), and an authorization of it.
    await obtainTokens(host.url, await hostileClient(), admin, { tenantId: tenant.id })
  })
  afterAll(() => host?.close())

  it("stores the strings in every resource's record", () => {
    const writable = tenantResources(allResources).filter((resource) => resource.write !== undefined).map((resource) => resource.name)
    expect([...seeded.keys()].sort()).toEqual([...writable].sort())
    for (const name of writable) expect(hostileFields.get(name), name).not.toEqual([])
  })

  it("renders every screen of the panel with them as text only", async () => {
    const session = new FormSession()
    const root = `${host.url}/panel`
    const script = "/panel/assets/panel.js"
    const problems: Array<string> = []
    /** Route to the statuses it answered; resource to what was seen of it. */
    const answered = new Map<PanelRoute, Set<number>>()
    const seen = new Map<string, Set<string>>()
    const note = (resource: string | undefined, what: string) => {
      if (resource) seen.set(resource, (seen.get(resource) ?? new Set()).add(what))
    }
    const queue: Array<URL> = []
    const visited = new Set<string>()
    const variants = new Set<string>()
    const forms = new Map<string, { form: PageForm; route: PanelRoute }>()

    /** Checks an answer and gathers its links and forms. */
    const read = (method: string, url: URL, response: PlainResponse) => {
      const match = routeOf(method, url.pathname)
      if (match) answered.set(match.route, (answered.get(match.route) ?? new Set()).add(response.status))
      if (response.status >= 500) problems.push(`${method} ${url.pathname}: ${response.status}`)
      if (response.location && response.location.origin === host.url && response.location.pathname.startsWith("/panel")) queue.push(response.location)
      if (!(response.headers["content-type"] ?? "").startsWith("text/html")) return
      expect(response.headers["content-security-policy"], url.pathname).toContain("script-src 'self';")
      for (const problem of pageProblems(response.text, { url: url.href, script })) problems.push(`${method} ${url.pathname}${url.search}: ${problem}`)
      if (match?.params.resource && response.status === 200) {
        note(match.params.resource, match.route)
        if (pageStrings(response.text).some((text) => text.includes(HOSTILE))) note(match.params.resource, `${match.route} shows`)
      }
      for (const link of linksOf(response.text, url.href)) {
        // A link within the page (`#content`) asks nothing of the server.
        if (link.hash !== "" && link.pathname === url.pathname) continue
        if (!link.pathname.startsWith("/panel") || link.pathname.startsWith("/panel/assets/")) continue
        queue.push(link)
        // The query a link carries (a cursor, a resource, a flag) is typed by people too: once per route, each value hostile.
        const target = routeOf("GET", link.pathname)
        const names = [...new Set(link.searchParams.keys())].sort().join(",")
        if (target && names && !variants.has(`${target.route} ${names}`)) {
          variants.add(`${target.route} ${names}`)
          const variant = new URL(link)
          for (const name of new Set(link.searchParams.keys())) variant.searchParams.set(name, HOSTILE)
          queue.push(variant)
        }
      }
      for (const form of formsOf(response.text, url.href)) {
        const target = routeOf(form.method, form.action.pathname)
        if (!target) {
          problems.push(`form to ${form.method} ${form.action.pathname} reaches no route`)
          continue
        }
        // One of each form per resource and action: a record's update form, not every record's.
        const key = `${target.route} ${target.params.resource ?? ""} ${target.params.action ?? ""}`
        if (!forms.has(key)) forms.set(key, { form, route: target.route })
      }
    }

    const walk = async () => {
      while (queue.length > 0) {
        const url = queue.shift()!
        if (visited.has(url.href)) continue
        visited.add(url.href)
        read("GET", url, await session.get(url))
      }
    }

    /**
     * A form sent as a person could: every field but the hidden ones holds the hostile string.
     * A refused form marks its fields; those go back to what the page offered (a new record's
     * to its example), until the form is taken or nothing more can change.
     */
    const send = async ({ form, route }: { form: PageForm; route: PanelRoute }) => {
      const resource = routeOf(form.method, form.action.pathname)?.params.resource
      const declared = allResources.find((item) => item.name === resource)
      const example = route === "POST /panel/r/:resource" && declared?.write
        ? valuesOf(createFields(declared), await exampleBody(declared, reference(asOperator(tenant, "hostile-strings"))))
        : {}
      const values: Record<string, string> = Object.fromEntries(form.fields.map((field) => [field.name, field.kind === "hidden" ? field.value : HOSTILE]))
      const restored = new Set<string>()
      for (let round = 0; round < 5; round++) {
        const sent = form.method === "POST" ? await session.post(form.action, values) : await session.get(new URL(`${form.action.pathname}?${new URLSearchParams(values)}`, form.action))
        read(form.method, form.action, sent)
        note(resource, `${route} ${routeOf(form.method, form.action.pathname)?.params.action ?? ""}`.trim())
        const refused = sent.status === 422 ? invalidFieldsOf(sent.text).filter((name) => !restored.has(name)) : []
        if (refused.length === 0) return
        for (const name of refused) {
          restored.add(name)
          values[name] = example[name] ?? form.fields.find((field) => field.name === name)?.value ?? ""
        }
      }
    }

    // Signed out: the sign-in page, and the page a refused sign-in answers with what was typed.
    const signInUrl = new URL(`${root}/sign-in?next=${encodeURIComponent(HOSTILE)}`)
    const signIn = await session.get(signInUrl)
    read("GET", signInUrl, signIn)
    const refusedSignIn = await session.post(`${root}/sign-in`, { ...hiddenFieldsOf(signIn.text), email: HOSTILE, password: HOSTILE })
    read("POST", new URL(`${root}/sign-in`), refusedSignIn)
    const typedShown = pageStrings(refusedSignIn.text).includes(HOSTILE)
    const signedIn = await session.post(`${root}/sign-in`, { ...hiddenFieldsOf((await session.get(`${root}/sign-in`)).text), email: admin.email, password: admin.password })
    expect(signedIn.status).toBe(303)
    read("POST", new URL(`${root}/sign-in`), signedIn)
    // In the company holding the records (the admin's other one is where the switcher leads last).
    const first = await session.get(root)
    expect((await session.post(`${root}/tenant`, { csrf: hiddenFieldsOf(first.text).csrf, tenant_id: tenant.id })).status).toBe(303)

    await walk()
    const sentForms = new Set<string>()
    for (;;) {
      const next = [...forms.entries()].filter(([key]) => !sentForms.has(key)).sort(([, a], [, b]) => sentLast(a.route) - sentLast(b.route))[0]
      if (!next) break
      sentForms.add(next[0])
      await send(next[1])
      await walk()
    }

    expect(problems).toEqual([])
    expect(refusedSignIn.status).toBe(401)
    expect(typedShown).toBe(true)
    // The walk reached every route, and every screen answered at least once.
    const routes = PANEL_ROUTES.filter((route) => !route.startsWith("GET /panel/assets/"))
    expect(routes.filter((route) => !answered.has(route))).toEqual([])
    expect(routes.filter((route) => route.startsWith("GET ") && !answered.get(route)!.has(200))).toEqual([])
    // Every resource's list, form and record (showing the strings), and each of its actions.
    const missing: Array<string> = []
    for (const resource of tenantResources(allResources)) {
      const got = seen.get(resource.name) ?? new Set()
      const wanted = ["GET /panel/r/:resource", ...(resource.write ? ["GET /panel/r/:resource/new", "POST /panel/r/:resource", "GET /panel/r/:resource/:id shows", "POST /panel/r/:resource/:id"] : [])]
      for (const action of resource.actions ?? []) if (action.method === "POST" && !action.raw) wanted.push(`POST /panel/r/:resource/:id/actions/:action ${action.name}`)
      for (const what of wanted) if (!got.has(what)) missing.push(`${resource.name}: ${what}`)
    }
    expect(missing).toEqual([])
  })

  it("renders every OAuth page with them as text only", async () => {
    const problems: Array<string> = []
    const shown: Array<string> = []
    const check = (label: string, url: string, response: PlainResponse, status: number) => {
      expect(response.status, `${label}: ${response.text.slice(0, 300)}`).toBe(status)
      expect(response.headers["content-security-policy"], label).toMatch(/^default-src 'none'; style-src 'unsafe-inline';/)
      for (const problem of pageProblems(response.text, { url })) problems.push(`${label}: ${problem}`)
      if (pageStrings(response.text).some((text) => text.includes(HOSTILE))) shown.push(label)
      return response
    }
    const authorize = `${host.url}/oauth/authorize`
    // A client of its own: the panel's walk revokes the company's.
    const client = await hostileClient()
    /** An authorization request with the strings where the server keeps them as they are: the state and the resource travel in the forms. */
    const hostileRequest = (resource = HOSTILE) => authorizationUrl(host.url, { clientId: client.clientId, state: HOSTILE, pkce: makePkce(), resource })
    const post = (session: FormSession, fields: Readonly<Record<string, string | undefined>>) => session.post(authorize, fields)

    // The sign-in page (the client's name, the hidden state and resource), and its refusal with what was typed.
    const session = new FormSession()
    const url = hostileRequest()
    const signIn = check("sign-in", url.href, await session.get(url), 200)
    const fields = hiddenFieldsOf(signIn.text)
    expect(fields.state).toBe(HOSTILE)
    const refused = check("sign-in refused", authorize, await post(session, { ...fields, email: HOSTILE, password: HOSTILE }), 401)
    check("sign-in expired", authorize, await post(new FormSession(), { ...fields, email: HOSTILE, password: HOSTILE }), 403)
    const signedIn = await post(session, { ...hiddenFieldsOf(refused.text), email: admin.email, password: admin.password })
    expect(signedIn.status).toBe(303)

    // Consent: the companies to choose from (both named with the strings), the user's email, the scopes.
    const consent = check("consent with a company select", url.href, await session.get(signedIn.location!), 200)
    const consentFields = hiddenFieldsOf(consent.text)
    check("consent for a company not the user's", authorize, await post(session, { ...consentFields, tenant_id: HOSTILE, decision: "allow" }), 400)
    check("consent with another CSRF token", authorize, await post(session, { ...consentFields, csrf: HOSTILE, tenant_id: tenant.id, decision: "allow" }), 403)
    check("an unknown form action", authorize, await post(session, { ...consentFields, action: HOSTILE }), 400)
    const everyCompany = authorizationUrl(host.url, { clientId: client.clientId, state: HOSTILE, pkce: makePkce(), resource: `${host.url}/mcp` })
    check("consent for every company", everyCompany.href, await session.get(everyCompany), 200)
    const single = await hostileUser([{ tenantId: tenant.id, role: "admin" }])
    const alone = new FormSession()
    const aloneSignIn = await alone.get(url)
    const aloneIn = await post(alone, { ...hiddenFieldsOf(aloneSignIn.text), email: single.email, password: single.password })
    check("consent in the one company", url.href, await alone.get(aloneIn.location!), 200)

    // Pages shown before the redirect URI is trusted, naming what was sent.
    const errors: ReadonlyArray<[string, string]> = [
      ["no client_id", `${authorize}?response_type=code&state=${encodeURIComponent(HOSTILE)}`],
      ["an unknown client", `${authorize}?response_type=code&client_id=${encodeURIComponent(HOSTILE)}`],
      ["a redirect URI not registered", `${authorize}?response_type=code&client_id=${client.clientId}&redirect_uri=${encodeURIComponent(HOSTILE)}`],
      ["a parameter with a NUL", `${authorize}?${encodeURIComponent(HOSTILE)}=%00`]
    ]
    for (const [label, target] of errors) check(label, target, await new FormSession().get(target), 400)
    check("an unreadable form", authorize, await new FormSession().request("POST", authorize, { form: { [HOSTILE]: "a", ["\u0000"]: HOSTILE } }), 400)

    expect(problems).toEqual([])
    // The strings reached the pages (as text): a check that could not fail would prove nothing.
    expect(shown).toEqual(expect.arrayContaining(["sign-in", "sign-in refused", "consent with a company select", "consent for every company", "consent in the one company", "a parameter with a NUL"]))
  })
})
