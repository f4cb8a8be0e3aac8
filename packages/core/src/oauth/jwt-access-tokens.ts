import { Effect, Option } from "effect"
import { createLocalJWKSet, createRemoteJWKSet, decodeJwt, type JWTPayload, jwtVerify, SignJWT } from "jose"
import { hashSecret } from "../auth/tokens.js"
import { SIGNING_ALGORITHM, type SigningKey, type SigningKeys } from "../store/signing-keys.js"
import type { Tenancy } from "../tenancy/tenancy.js"
import { unauthenticated } from "./principals.js"
import type { OAuthRepository } from "./repository.js"
import type { IssuerContext } from "./service.js"
import { mcpResource, type OAuthSettings } from "./settings.js"

/** Claims every JWT access token of ours carries (RFC 9068 section 2.2); one missing means `sign` did not make it. */
const REQUIRED_CLAIMS = ["iss", "sub", "aud", "exp", "iat", "jti"] as const

export const looksLikeJwt = (token: string) => /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)

/**
 * JWT access tokens: those we sign for the MCP resource (RFC 9068), and those of the configured
 * identity provider. A JWT of ours names only its user; its grant (scopes, revocation, expiry)
 * is kept server-side under its jti.
 */
export const makeJwtAccessTokens = (repo: OAuthRepository["Service"], config: OAuthSettings, tenancy: Tenancy["Service"], signingKeys: SigningKeys["Service"]) => {
  const externalJwks = config.externalIdp ? createRemoteJWKSet(new URL(config.externalIdp.jwksUrl)) : undefined

  const sign = (key: SigningKey, userId: string, audience: string, issuer: string, jti: string) =>
    Effect.promise(() =>
      new SignJWT({})
        .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: key.kid, typ: "at+jwt" })
        .setIssuer(issuer)
        .setSubject(userId)
        .setAudience(audience)
        .setIssuedAt()
        .setExpirationTime(`${config.lifetimes.accessSeconds}s`)
        .setJti(jti)
        .sign(key.privateKey)
    )

  const verifyOurs = (token: string, issuer: string) =>
    Effect.gen(function* () {
      const keys = yield* signingKeys.publicKeys
      const verified = yield* Effect.tryPromise(() =>
        jwtVerify(token, createLocalJWKSet({ keys: [...keys] }), {
          issuer,
          audience: [mcpResource(issuer), `${mcpResource(issuer)}/`],
          algorithms: [SIGNING_ALGORITHM],
          // RFC 9068: an access token says it is one, so an ID token or another JWT of ours cannot stand in.
          typ: "at+jwt",
          requiredClaims: [...REQUIRED_CLAIMS]
        })
      ).pipe(Effect.mapError(() => unauthenticated("The access token is not valid (signature, type, issuer, audience, expiry or a missing claim)")))
      const { sub, jti } = verified.payload
      if (typeof sub !== "string" || typeof jti !== "string") return yield* Effect.fail(unauthenticated("The access token lacks sub or jti"))
      const row = yield* repo.findToken(hashSecret(jti))
      if (Option.isNone(row) || row.value.kind !== "jwt") return yield* Effect.fail(unauthenticated("The access token was not issued here"))
      if (row.value.revoked_at !== null) return yield* Effect.fail(unauthenticated("The access token was revoked"))
      if (row.value.expired) return yield* Effect.fail(unauthenticated("The access token expired"))
      // A token signed with our key but naming another user than its grant's is forged or misissued.
      if (row.value.user_id !== sub) return yield* Effect.fail(unauthenticated("The access token's subject is not the user it was issued to"))
      return { userId: sub, scopes: row.value.scope.split(" ") as ReadonlyArray<string> | undefined }
    })

  const verifyExternal = (token: string, payload: JWTPayload) =>
    Effect.gen(function* () {
      const idp = config.externalIdp!
      const verified = yield* Effect.tryPromise(() =>
        // A token that never expires is refused from the identity provider too.
        jwtVerify(token, externalJwks!, { issuer: idp.issuer, audience: idp.audience, algorithms: [...idp.algorithms], requiredClaims: ["exp"] })
      ).pipe(Effect.mapError(() => unauthenticated("The identity provider's token is not valid (signature, issuer, audience or expiry)")))
      const claim = verified.payload[idp.userClaim] ?? payload[idp.userClaim]
      if (typeof claim !== "string") return yield* Effect.fail(unauthenticated(`The token lacks the ${idp.userClaim} claim`))
      const user = yield* tenancy.getUser(claim).pipe(Effect.mapError(() => unauthenticated("The token names no user of this service")))
      const scope = verified.payload.scope
      return { userId: user.id, scopes: typeof scope === "string" ? scope.split(" ").filter(Boolean) : undefined }
    })

  /** Verifies a JWT of ours or of the configured identity provider: the user it names and its scopes. */
  const verifyJwt = (token: string, context: IssuerContext) =>
    Effect.gen(function* () {
      const payload = yield* Effect.try(() => decodeJwt(token)).pipe(Effect.mapError(() => unauthenticated("The bearer token is not a valid JWT")))
      if (payload.iss === context.issuer) return yield* verifyOurs(token, context.issuer)
      if (config.externalIdp && payload.iss === config.externalIdp.issuer) return yield* verifyExternal(token, payload)
      return yield* Effect.fail(unauthenticated("The token's issuer is not trusted"))
    })

  return { sign, verifyOurs, verifyJwt }
}
