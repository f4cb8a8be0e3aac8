import * as SqlClient from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { Effect, Layer, Option } from "effect"
import { type PermissionGrant } from "../auth/permissions.js"
import { grantsFromRows, type Principal, type Role } from "../auth/principal.js"
import { hashSecret, newApiKeyToken, parseApiKeyToken, sameHash } from "../auth/tokens.js"
import { CredentialCache, LastUseThrottle } from "../auth/credential-cache.js"
import { requireUuid } from "../engine/use-cases/checks.js"
import { isValidDate } from "../engine/datetime.js"
import { isUuid } from "../engine/filter.js"
import { Conflict, invalid, NotFound, Unauthenticated, unprocessable } from "../errors.js"
import { type ApiKey, type Member, type Membership, Tenancy, type Tenant, type User } from "../tenancy/tenancy.js"
import { defaultTimeZone, looksLikeTimeZone } from "../tenancy/time-zones.js"
import { isUniqueViolation } from "./sql-errors.js"
import { rateLimitProblem } from "../ratelimit/credential-limits.js"

interface KeyRow {
  readonly id: string
  readonly tenant_id: string
  readonly public_id: string
  readonly name: string
  readonly description: string | null
  readonly expires_at: string | null
  readonly last_used_at: string | null
  readonly created_at: string
  readonly deleted_at: string | null
  readonly permissions: ReadonlyArray<PermissionGrant> | null
  readonly rate_limit_per_minute: number | null
}

const toApiKey = (row: KeyRow): ApiKey => ({
  id: row.id,
  tenant_id: row.tenant_id,
  name: row.name,
  description: row.description,
  prefix: `sk_${row.public_id}`,
  permissions: row.permissions ?? [],
  expires_at: row.expires_at,
  last_used_at: row.last_used_at,
  created_at: row.created_at,
  revoked_at: row.deleted_at,
  rate_limit_per_minute: row.rate_limit_per_minute
})

const PERMISSIONS_OF_KEY = `coalesce((SELECT jsonb_agg(jsonb_build_object('resource_code', p.resource_code, 'can_read', p.can_read,
  'can_create', p.can_create, 'can_update', p.can_update, 'can_delete', p.can_delete) ORDER BY p.resource_code)
  FROM api_key_permissions p WHERE p.tenant_id = k.tenant_id AND p.api_key_id = k.id), '[]'::jsonb) AS permissions`

/** A key stops working at 00:00 UTC of its `expires_at` date. */
export const isExpired = (expiresAt: string | null, now: Date): boolean =>
  expiresAt !== null && now.getTime() >= Date.parse(`${expiresAt}T00:00:00Z`)

/** Last use is recorded at most once a minute per key, so reads do not turn into writes. */
const LAST_USED_RESOLUTION = "1 minute"
const LAST_USED_RESOLUTION_MS = 60_000

interface AuthenticatedKey {
  readonly principal: Principal
  readonly expiresAt: string | null
}

export const layerTenancy = Layer.effect(
  Tenancy,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    // Steady-state reads then cost one statement (the data's): see CREDENTIAL_CACHE_TTL_MS for the bound on revocations made elsewhere.
    const authenticated = new CredentialCache<AuthenticatedKey>()
    const lastUse = new LastUseThrottle(LAST_USED_RESOLUTION_MS)

    const getTenant = (id: string) =>
      Effect.gen(function* () {
        const uuid = yield* requireUuid(id, "tenant id")
        const rows = yield* sql<Tenant>`SELECT id, name, country_code, time_zone, created_at, updated_at FROM tenants WHERE id = ${uuid}::uuid`.pipe(Effect.orDie)
        return yield* Option.match(Option.fromNullishOr(rows[0]), {
          onNone: () => Effect.fail(new NotFound({ message: `Tenant ${id} not found`, code: "TENANT_NOT_FOUND" })),
          onSome: Effect.succeed
        })
      })

    const getUser = (reference: string) =>
      Effect.gen(function* () {
        const rows = isUuid(reference)
          ? yield* sql<User>`SELECT id, email, name, created_at, updated_at FROM users WHERE id = ${reference}::uuid`.pipe(Effect.orDie)
          : yield* sql<User>`SELECT id, email, name, created_at, updated_at FROM users WHERE lower(email) = lower(${reference})`.pipe(Effect.orDie)
        return yield* Option.match(Option.fromNullishOr(rows[0]), {
          onNone: () => Effect.fail(new NotFound({ message: `User ${reference} not found`, code: "USER_NOT_FOUND" })),
          onSome: Effect.succeed
        })
      })

    const selectKeys = (where: Fragment) =>
      sql<KeyRow>`SELECT k.id, k.tenant_id, k.public_id, k.name, k.description, k.expires_at, k.last_used_at, k.created_at, k.deleted_at,
        k.rate_limit_per_minute, ${sql.literal(PERMISSIONS_OF_KEY)} FROM api_keys k WHERE ${where} ORDER BY k.created_at, k.id`.pipe(Effect.orDie)

    const insertGrants = (table: "api_key_permissions" | "membership_permissions", owner: "api_key_id" | "membership_id", tenantId: string, ownerId: string, grants: ReadonlyArray<PermissionGrant>) =>
      Effect.forEach(grants, (grant) =>
        sql`INSERT INTO ${sql.literal(table)} (tenant_id, ${sql.literal(owner)}, resource_code, can_read, can_create, can_update, can_delete)
          VALUES (${tenantId}::uuid, ${ownerId}::uuid, ${grant.resource_code}, ${grant.can_read}, ${grant.can_create}, ${grant.can_update}, ${grant.can_delete})`, { discard: true })

    /** The zone as the store spells it (PostgreSQL's list decides what exists: `AT TIME ZONE` must know it). */
    const knownZone = (zone: string) =>
      looksLikeTimeZone(zone)
        ? sql<{ name: string }>`SELECT name FROM pg_timezone_names WHERE lower(name) = lower(${zone.trim()}) ORDER BY name LIMIT 1`.pipe(
          Effect.orDie,
          Effect.map((rows) => Option.fromNullishOr(rows[0]?.name))
        )
        : Effect.succeed(Option.none<string>())

    const requireZone = (zone: string) =>
      Effect.flatMap(knownZone(zone), Option.match({
        onNone: () => Effect.fail(invalid(`Unknown time zone "${zone}": use an IANA name such as America/Sao_Paulo or UTC`, "INVALID_TIME_ZONE")),
        onSome: Effect.succeed
      }))

    const requireRateLimit = (perMinute: number | null | undefined) => {
      const problem = perMinute === null || perMinute === undefined ? undefined : rateLimitProblem(perMinute)
      return problem ? Effect.fail(invalid(problem, "INVALID_RATE_LIMIT")) : Effect.void
    }

    const PERMISSIONS_OF_MEMBER = `coalesce((SELECT jsonb_agg(jsonb_build_object('resource_code', p.resource_code, 'can_read', p.can_read,
      'can_create', p.can_create, 'can_update', p.can_update, 'can_delete', p.can_delete) ORDER BY p.resource_code)
      FROM membership_permissions p WHERE p.tenant_id = m.tenant_id AND p.membership_id = m.id), '[]'::jsonb) AS permissions`

    const selectMembers = (tenantId: string, membershipId?: string) =>
      sql<Member>`SELECT m.id, m.tenant_id, m.user_id, m.role, m.created_at, u.email, u.name,
        ${sql.literal(PERMISSIONS_OF_MEMBER)} FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.tenant_id = ${tenantId}::uuid ${membershipId === undefined ? sql`` : sql`AND m.id = ${membershipId}::uuid`} ORDER BY lower(u.email)`.pipe(Effect.orDie)

    const memberNotFound = new NotFound({ message: "Member not found", code: "MEMBER_NOT_FOUND" })

    /**
     * Inside a transaction: the membership, with the tenant's admin rows locked so two
     * concurrent demotions cannot both pass the last-admin check.
     */
    const lockedMember = (tenantId: string, membershipId: string) =>
      Effect.gen(function* () {
        const admins = yield* sql<{ id: string }>`SELECT id FROM memberships WHERE tenant_id = ${tenantId}::uuid AND role = 'admin' ORDER BY id FOR UPDATE`.pipe(Effect.orDie)
        const rows = yield* sql<{ id: string; role: Role }>`SELECT id, role FROM memberships WHERE tenant_id = ${tenantId}::uuid AND id = ${membershipId}::uuid FOR UPDATE`.pipe(Effect.orDie)
        if (!rows[0]) return yield* Effect.fail(memberNotFound)
        return { membership: rows[0], lastAdmin: rows[0].role === "admin" && admins.length === 1 }
      })

    const lastAdmin = () => unprocessable("A company keeps at least one admin", { role: ["the last admin cannot be demoted or removed"] }, "LAST_ADMIN")

    /**
     * One member of a tenant changed in a transaction, the tenant's admins locked with it, so
     * `change` can hold the last-admin rule against concurrent demotions and removals.
     */
    const changeMember = <E>(
      tenantId: string,
      membershipId: string,
      change: (tenant: string, id: string, found: Effect.Success<ReturnType<typeof lockedMember>>) => Effect.Effect<void, E>
    ) =>
      Effect.gen(function* () {
        const tenant = yield* getTenant(tenantId)
        const id = yield* requireUuid(membershipId, "member id")
        yield* sql.withTransaction(Effect.flatMap(lockedMember(tenant.id, id), (found) => change(tenant.id, id, found))).pipe(Effect.catchTag("SqlError", Effect.die))
        return { tenant: tenant.id, id }
      })

    return Tenancy.of({
      setRateLimit: (id, perMinute) =>
        Effect.gen(function* () {
          const tenant = yield* getTenant(id)
          yield* requireRateLimit(perMinute)
          const rows = yield* sql<Tenant>`UPDATE tenants SET rate_limit_per_minute = ${perMinute}, updated_at = now() WHERE id = ${tenant.id}::uuid
            RETURNING id, name, country_code, time_zone, created_at, updated_at`.pipe(Effect.orDie)
          authenticated.forget({ tenantId: tenant.id })
          return rows[0]
        }),
      listMembers: (tenantId) => Effect.flatMap(getTenant(tenantId), (tenant) => selectMembers(tenant.id)),
      updateMember: ({ tenantId, membershipId, role, permissions }) =>
        Effect.gen(function* () {
          const { tenant, id } = yield* changeMember(tenantId, membershipId, (tenant, id, found) =>
            Effect.gen(function* () {
              if (found.lastAdmin && role !== "admin") return yield* Effect.fail(lastAdmin())
              yield* sql`UPDATE memberships SET role = ${role}, updated_at = now() WHERE tenant_id = ${tenant}::uuid AND id = ${id}::uuid`.pipe(Effect.orDie)
              yield* sql`DELETE FROM membership_permissions WHERE tenant_id = ${tenant}::uuid AND membership_id = ${id}::uuid`.pipe(Effect.orDie)
              yield* insertGrants("membership_permissions", "membership_id", tenant, id, role === "admin" ? [] : permissions).pipe(Effect.orDie)
            }))
          const [member] = yield* selectMembers(tenant, id)
          return member
        }),
      removeMember: (tenantId, membershipId) =>
        Effect.asVoid(changeMember(tenantId, membershipId, (tenant, id, found) =>
          found.lastAdmin
            ? Effect.fail(lastAdmin())
            : sql`DELETE FROM memberships WHERE tenant_id = ${tenant}::uuid AND id = ${id}::uuid`.pipe(Effect.orDie, Effect.asVoid))),
      setTimeZone: (id, timeZone) =>
        Effect.gen(function* () {
          const tenant = yield* getTenant(id)
          const zone = yield* requireZone(timeZone)
          const rows = yield* sql<Tenant>`UPDATE tenants SET time_zone = ${zone}, updated_at = now() WHERE id = ${tenant.id}::uuid
            RETURNING id, name, country_code, time_zone, created_at, updated_at`.pipe(Effect.orDie)
          return rows[0]
        }),
      createTenant: (input) =>
        Effect.gen(function* () {
          const { name, countryCode } = input
          const trimmed = name.trim()
          if (!trimmed) return yield* Effect.fail(invalid("Tenant name must not be empty"))
          if (!/^[A-Za-z]{2}$/.test(countryCode)) return yield* Effect.fail(invalid(`Country must be an ISO 3166-1 alpha-2 code, got "${countryCode}"`))
          const country = countryCode.toUpperCase()
          const known = yield* sql<{ known: boolean; loaded: boolean }>`SELECT EXISTS (SELECT 1 FROM countries WHERE iso2 = ${country}) AS known, EXISTS (SELECT 1 FROM countries) AS loaded`.pipe(Effect.orDie)
          if (known[0].loaded && !known[0].known) return yield* Effect.fail(invalid(`Unknown country code "${countryCode}"`))
          const zone = input.timeZone === undefined
            ? Option.getOrElse(yield* knownZone(defaultTimeZone(country)), () => "UTC")
            : yield* requireZone(input.timeZone)
          const rows = yield* sql<Tenant>`INSERT INTO tenants (name, country_code, time_zone) VALUES (${trimmed}, ${country}, ${zone}) RETURNING id, name, country_code, time_zone, created_at, updated_at`.pipe(Effect.orDie)
          return rows[0]
        }),
      listTenants: sql<Tenant>`SELECT id, name, country_code, time_zone, created_at, updated_at FROM tenants ORDER BY created_at, id`.pipe(Effect.orDie),
      getTenant,
      countTenants: sql<{ count: number }>`SELECT count(*)::int AS count FROM tenants`.pipe(Effect.map((rows) => rows[0].count), Effect.orDie),
      createUser: ({ email, name }) =>
        Effect.gen(function* () {
          if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) return yield* Effect.fail(invalid(`"${email}" is not an email address`))
          if (!name.trim()) return yield* Effect.fail(invalid("User name must not be empty"))
          const rows = yield* sql<User>`INSERT INTO users (email, name) VALUES (${email.trim()}, ${name.trim()}) RETURNING id, email, name, created_at, updated_at`.pipe(
            Effect.catchTag("SqlError", (error) =>
              isUniqueViolation(error) ? Effect.fail(new Conflict({ message: `A user with email ${email} already exists`, code: "DUPLICATE" })) : Effect.die(error))
          )
          return rows[0]
        }),
      getUser,
      addMember: ({ tenantId, userId, role, permissions = [] }) =>
        Effect.gen(function* () {
          const tenant = yield* getTenant(tenantId)
          const user = yield* getUser(userId)
          const membership = yield* sql.withTransaction(
            Effect.gen(function* () {
              const rows = yield* sql<{ id: string; created_at: string }>`INSERT INTO memberships (tenant_id, user_id, role) VALUES (${tenant.id}::uuid, ${user.id}::uuid, ${role}) RETURNING id, created_at`
              yield* insertGrants("membership_permissions", "membership_id", tenant.id, rows[0].id, permissions)
              return rows[0]
            })
          ).pipe(
            Effect.catchTag("SqlError", (error) =>
              isUniqueViolation(error)
                ? Effect.fail(new Conflict({ message: `${user.email} is already a member of ${tenant.name}`, code: "DUPLICATE" }))
                : Effect.die(error))
          )
          return { id: membership.id, tenant_id: tenant.id, user_id: user.id, role, permissions, created_at: membership.created_at } satisfies Membership
        }),
      createApiKey: (input) =>
        Effect.gen(function* () {
          const tenant = yield* getTenant(input.tenantId)
          if (!input.name.trim()) return yield* Effect.fail(invalid("API key name must not be empty"))
          if (input.expiresAt !== undefined && !isValidDate(input.expiresAt)) {
            return yield* Effect.fail(invalid(`expires_at must be a date (YYYY-MM-DD), got "${input.expiresAt}"`))
          }
          if (input.permissions.length === 0) return yield* Effect.fail(invalid("An API key needs at least one permission"))
          yield* requireRateLimit(input.rateLimitPerMinute)
          const { publicId, secret, token } = newApiKeyToken()
          const id = yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* sql`INSERT INTO api_key_ids (public_id, tenant_id) VALUES (${publicId}, ${tenant.id}::uuid)`
              const rows = yield* sql<{ id: string }>`INSERT INTO api_keys (tenant_id, public_id, secret_hash, name, description, expires_at, created_by_user_id, rate_limit_per_minute)
                VALUES (${tenant.id}::uuid, ${publicId}, ${hashSecret(secret)}, ${input.name.trim()}, ${input.description ?? null},
                  ${input.expiresAt ?? null}::date, ${input.createdByUserId ?? null}::uuid, ${input.rateLimitPerMinute ?? null}::int) RETURNING id`
              yield* insertGrants("api_key_permissions", "api_key_id", tenant.id, rows[0].id, input.permissions)
              return rows[0].id
            })
          ).pipe(Effect.orDie)
          const [key] = yield* selectKeys(sql`k.id = ${id}::uuid`)
          return { key: toApiKey(key), token }
        }),
      listApiKeys: (tenantId) =>
        Effect.gen(function* () {
          const tenant = yield* getTenant(tenantId)
          return (yield* selectKeys(sql`k.tenant_id = ${tenant.id}::uuid`)).map(toApiKey)
        }),
      revokeApiKey: (keyId) =>
        Effect.gen(function* () {
          const id = yield* requireUuid(keyId, "API key id")
          yield* sql`UPDATE api_keys SET deleted_at = coalesce(deleted_at, now()), updated_at = now() WHERE id = ${id}::uuid`.pipe(Effect.orDie)
          authenticated.forget({ keyId: id.toLowerCase() })
          const [key] = yield* selectKeys(sql`k.id = ${id}::uuid`)
          if (!key) return yield* Effect.fail(new NotFound({ message: `API key ${keyId} not found`, code: "API_KEY_NOT_FOUND" }))
          return toApiKey(key)
        }),
      authenticateApiKey: (token) =>
        Effect.gen(function* () {
          const rejected = (message: string) => Effect.fail(new Unauthenticated({ message, code: "INVALID_CREDENTIALS" }))
          const tokenHash = CredentialCache.tokenHash(token)
          const cached = authenticated.get(tokenHash)
          if (cached) {
            if (isExpired(cached.expiresAt, new Date())) return yield* rejected(`The API key expired on ${cached.expiresAt}`)
            return cached.principal
          }
          const parts = parseApiKeyToken(token)
          if (!parts) return yield* rejected("The API key is malformed")
          const rows = yield* sql<KeyRow & { secret_hash: string; country_code: string }>`SELECT k.id, k.tenant_id, k.public_id, k.name,
              k.description, k.expires_at, k.last_used_at, k.created_at, k.deleted_at, k.secret_hash, t.country_code,
              coalesce(k.rate_limit_per_minute, t.rate_limit_per_minute) AS rate_limit_per_minute, ${sql.literal(PERMISSIONS_OF_KEY)}
            FROM api_key_ids l JOIN api_keys k ON k.tenant_id = l.tenant_id AND k.public_id = l.public_id JOIN tenants t ON t.id = k.tenant_id
            WHERE l.public_id = ${parts.publicId}`.pipe(Effect.orDie)
          const key = rows[0]
          // Hash comparison runs even for unknown ids so timing does not tell which public ids exist.
          const matches = sameHash(key?.secret_hash ?? hashSecret("absent"), hashSecret(parts.secret))
          if (!key || !matches) return yield* rejected("The API key is not valid")
          if (key.deleted_at !== null) return yield* rejected("The API key was revoked")
          if (isExpired(key.expires_at, new Date())) return yield* rejected(`The API key expired on ${key.expires_at}`)
          // The store's own guard keeps several hosts to about one write a minute too.
          if (lastUse.due(key.id)) {
            yield* sql`UPDATE api_keys SET last_used_at = now() WHERE tenant_id = ${key.tenant_id}::uuid AND id = ${key.id}::uuid
              AND (last_used_at IS NULL OR last_used_at < now() - ${LAST_USED_RESOLUTION}::interval)`.pipe(Effect.orDie)
          }
          const principal: Principal = {
            tenantId: key.tenant_id,
            tenantCountry: key.country_code,
            actor: { kind: "api_key", id: key.id, name: key.name },
            role: undefined,
            grants: grantsFromRows(key.permissions ?? []),
            credential: { id: `key:${key.id}`, ...(key.rate_limit_per_minute !== null ? { rateLimitPerMinute: key.rate_limit_per_minute } : {}) }
          }
          authenticated.set(tokenHash, { principal, expiresAt: key.expires_at }, { keyId: key.id, tenantId: key.tenant_id })
          return principal
        })
    })
  })
)

