import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * OAuth 2.0: clients, authorization codes, tokens (stored only as hashes),
 * signing keys for JWT access tokens, sign-in sessions of the authorization
 * pages, and the shared rate-limit counters (so several hosts enforce one limit).
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE TABLE oauth_clients (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  client_id text NOT NULL UNIQUE,
  secret_hash text,
  name text NOT NULL,
  redirect_uris jsonb NOT NULL,
  kind text NOT NULL CHECK (kind IN ('confidential', 'public')),
  registration text NOT NULL CHECK (registration IN ('operator', 'dynamic')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  revoked_at timestamptz(3)
);

CREATE TABLE oauth_authorization_codes (
  code_hash text PRIMARY KEY,
  client_id text NOT NULL REFERENCES oauth_clients (client_id),
  user_id uuid NOT NULL REFERENCES users (id),
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  redirect_uri text NOT NULL,
  redirect_uri_given boolean NOT NULL DEFAULT true,
  scope text NOT NULL,
  code_challenge text NOT NULL,
  resource text,
  expires_at timestamptz(3) NOT NULL,
  used_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE oauth_tokens (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  token_hash text NOT NULL UNIQUE,
  kind text NOT NULL CHECK (kind IN ('access', 'refresh', 'jwt')),
  client_id text NOT NULL REFERENCES oauth_clients (client_id),
  user_id uuid NOT NULL REFERENCES users (id),
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  scope text NOT NULL,
  resource text,
  code_hash text,
  family_id uuid NOT NULL,
  expires_at timestamptz(3) NOT NULL,
  rotated_at timestamptz(3),
  revoked_at timestamptz(3),
  created_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE INDEX oauth_tokens_family_idx ON oauth_tokens (family_id);
CREATE INDEX oauth_tokens_code_idx ON oauth_tokens (code_hash);

CREATE TABLE oauth_signing_keys (
  kid text PRIMARY KEY,
  algorithm text NOT NULL,
  public_jwk jsonb NOT NULL,
  private_jwk jsonb NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  retired_at timestamptz(3)
);

CREATE TABLE web_sessions (
  id_hash text PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users (id),
  csrf_token text NOT NULL,
  expires_at timestamptz(3) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE rate_limit_counters (
  key text NOT NULL,
  window_start timestamptz(3) NOT NULL,
  count integer NOT NULL,
  expires_at timestamptz(3) NOT NULL,
  PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_limit_counters_expiry_idx ON rate_limit_counters (expires_at);
`))
