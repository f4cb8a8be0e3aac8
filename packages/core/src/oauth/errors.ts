import { Schema } from "effect"

/**
 * An OAuth error (RFC 6749 section 5.2, RFC 7009, RFC 7591): `error` is the RFC code
 * clients branch on, `status` the HTTP status the endpoint answers with.
 */
export class OAuthError extends Schema.TaggedError<OAuthError>()("OAuthError", {
  error: Schema.String,
  description: Schema.String,
  status: Schema.Int
}) {}

export const oauthError = (error: string, description: string, status = 400) => new OAuthError({ error, description, status })
