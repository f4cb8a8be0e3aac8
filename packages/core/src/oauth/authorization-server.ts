import { Effect, Layer } from "effect"
import { SigningKeys } from "../store/signing-keys.js"
import { Tenancy } from "../tenancy/tenancy.js"
import { makeClients } from "./clients.js"
import { looksLikeJwt, makeJwtAccessTokens } from "./jwt-access-tokens.js"
import { makePrincipals } from "./principals.js"
import { OAuthRepository } from "./repository.js"
import { makeRevocation } from "./revocation.js"
import { OAuth } from "./service.js"
import { OAuthConfig } from "./settings.js"
import { makeSignIn } from "./sign-in.js"
import { makeTokenIssuance } from "./token-issuance.js"
import { makeTokenRotation } from "./token-rotation.js"

/**
 * The authorization server (`OAuth`) assembled from its policies: clients, sign-in, the code flow,
 * refresh-token rotation, revocation, JWT access tokens and the principals tokens stand for. What
 * it stores goes through `OAuthRepository`.
 */
export const makeAuthorizationServer = Effect.gen(function* () {
  const repo = yield* OAuthRepository
  const config = yield* OAuthConfig
  const tenancy = yield* Tenancy
  const signingKeys = yield* SigningKeys
  // Made (or loaded) while the host starts, so the first token request does not wait for it.
  yield* signingKeys.current
  const { lifetimes } = config

  const jwt = makeJwtAccessTokens(repo, config, tenancy, signingKeys)
  const principals = makePrincipals(repo, tenancy)
  const issuance = makeTokenIssuance(repo, lifetimes, signingKeys, jwt)

  return OAuth.of({
    ...makeClients(repo),
    ...makeSignIn(repo, tenancy, lifetimes),
    memberships: repo.memberships,
    issueCode: issuance.issueCode,
    exchangeCode: issuance.exchangeCode,
    ...makeTokenRotation(repo, signingKeys, issuance),
    ...makeRevocation(repo, jwt),
    ...principals,
    tokenUser: (token, context) =>
      looksLikeJwt(token)
        ? Effect.map(jwt.verifyJwt(token, context), (verified) => verified.userId)
        : Effect.map(principals.accessPrincipal(token), (principal) => principal.actor.id),
    jwks: Effect.map(signingKeys.publicKeys, (keys) => ({ keys })),
    verifyJwt: jwt.verifyJwt
  })
})

export const layerAuthorizationServer = Layer.effect(OAuth, makeAuthorizationServer)
