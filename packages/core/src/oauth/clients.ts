import { Effect, Option } from "effect"
import { BASE62, hashSecret, randomText, sameHash } from "../auth/tokens.js"
import { isUuid } from "../engine/filter.js"
import { invalid, NotFound } from "../errors.js"
import { oauthError } from "./errors.js"
import { redirectUriProblem } from "./redirect-uris.js"
import type { ClientRow, OAuthRepository } from "./repository.js"
import type { OAuth, OAuthClient } from "./service.js"

const toClient = ({ secret_hash: _secret, ...client }: ClientRow): OAuthClient => client

const newSecret = () => `secret_${randomText(43, BASE62)}`

/** The applications that may ask for tokens: registered with their redirect URIs, authenticated by their secret, revoked. */
export const makeClients = (repo: OAuthRepository["Service"]) => {
  const createClient: OAuth["Service"]["createClient"] = ({ name, redirectUris, kind, registration, tenantId }) =>
    Effect.gen(function* () {
      if (!name.trim()) return yield* Effect.fail(invalid("A client needs a name", "INVALID_CLIENT_METADATA"))
      if (redirectUris.length === 0) return yield* Effect.fail(invalid("A client needs at least one redirect URI", "INVALID_REDIRECT_URI"))
      for (const uri of redirectUris) {
        const problem = redirectUriProblem(uri)
        if (problem) return yield* Effect.fail(invalid(`Redirect URI ${uri} ${problem}`, "INVALID_REDIRECT_URI"))
      }
      const clientId = `client_${randomText(24, BASE62)}`
      const secret = kind === "confidential" ? newSecret() : undefined
      const row = yield* repo.insertClient({
        clientId,
        secretHash: secret ? hashSecret(secret) : null,
        name: name.trim(),
        redirectUris,
        kind,
        registration,
        tenantId: tenantId ?? null
      })
      return { client: toClient(row), secret }
    })

  const rotateClientSecret: OAuth["Service"]["rotateClientSecret"] = (tenantId, clientId) =>
    Effect.gen(function* () {
      const notFound = new NotFound({ message: `OAuth client ${clientId} not found`, code: "CLIENT_NOT_FOUND" })
      if (!isUuid(tenantId)) return yield* Effect.fail(notFound)
      const found = yield* repo.liveTenantClient(tenantId, clientId)
      if (Option.isNone(found)) return yield* Effect.fail(notFound)
      if (found.value.kind !== "confidential") return yield* Effect.fail(invalid("A public client has no secret to rotate", "PUBLIC_CLIENT"))
      const secret = newSecret()
      yield* repo.setClientSecret(clientId, hashSecret(secret))
      return { client: toClient(found.value), secret }
    })

  const authenticateClient: OAuth["Service"]["authenticateClient"] = ({ clientId, secret }) =>
    Effect.gen(function* () {
      const found = yield* repo.findClient(clientId)
      // The same comparison runs for unknown clients, so timing does not tell which client ids exist.
      const stored = Option.match(found, { onNone: () => hashSecret("absent"), onSome: (row) => row.secret_hash ?? hashSecret("public") })
      const matches = secret !== undefined && sameHash(stored, hashSecret(secret))
      if (Option.isNone(found) || found.value.revoked_at !== null) return yield* Effect.fail(oauthError("invalid_client", "Unknown client", 401))
      const client = found.value
      if (client.kind === "confidential" && !matches) return yield* Effect.fail(oauthError("invalid_client", "Client authentication failed", 401))
      if (client.kind === "public" && secret !== undefined) {
        return yield* Effect.fail(oauthError("invalid_client", "A public client has no secret", 401))
      }
      return toClient(client)
    })

  const revokeClient: OAuth["Service"]["revokeClient"] = (clientId) =>
    Effect.gen(function* () {
      yield* repo.revokeClient(clientId)
      yield* repo.revokeClientTokens(clientId)
      const found = yield* repo.findClient(clientId)
      return yield* Option.match(found, {
        onNone: () => Effect.fail(new NotFound({ message: `OAuth client ${clientId} not found`, code: "CLIENT_NOT_FOUND" })),
        onSome: (row) => Effect.succeed(toClient(row))
      })
    })

  return {
    createClient,
    listClients: Effect.map(repo.allClients, (rows) => rows.map(toClient)),
    tenantClients: (tenantId: string) => (isUuid(tenantId) ? Effect.map(repo.tenantClients(tenantId), (rows) => rows.map(toClient)) : Effect.succeed([])),
    rotateClientSecret,
    findClient: (clientId: string) => Effect.map(repo.findClient(clientId), Option.map(toClient)),
    authenticateClient,
    revokeClient
  }
}
