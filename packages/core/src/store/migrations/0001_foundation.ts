import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Tenancy, credentials, settings and the text-search configuration.
 * Every tenant-owned table is keyed (tenant_id, id) and its indexes lead with tenant_id.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE EXTENSION IF NOT EXISTS unaccent;

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'erp_search') THEN
    CREATE TEXT SEARCH CONFIGURATION erp_search (COPY = simple);
    ALTER TEXT SEARCH CONFIGURATION erp_search
      ALTER MAPPING FOR asciiword, asciihword, hword_asciipart, word, hword, hword_part WITH unaccent, simple;
  END IF;
END
$$;

CREATE TABLE erp_settings (
  key text PRIMARY KEY,
  value text NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE tenants (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  name text NOT NULL,
  country_code char(2) NOT NULL,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  email text NOT NULL,
  name text NOT NULL,
  password_hash text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE memberships (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  user_id uuid NOT NULL REFERENCES users (id),
  role text NOT NULL CHECK (role IN ('admin', 'member')),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, user_id)
);
CREATE INDEX memberships_user_idx ON memberships (user_id);

CREATE TABLE membership_permissions (
  tenant_id uuid NOT NULL,
  membership_id uuid NOT NULL,
  resource_code text NOT NULL,
  can_read boolean NOT NULL DEFAULT false,
  can_create boolean NOT NULL DEFAULT false,
  can_update boolean NOT NULL DEFAULT false,
  can_delete boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, membership_id, resource_code),
  FOREIGN KEY (tenant_id, membership_id) REFERENCES memberships (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE api_keys (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  public_id text NOT NULL UNIQUE,
  secret_hash text NOT NULL,
  name text NOT NULL,
  description text,
  expires_at date,
  last_used_at timestamptz(3),
  created_by_user_id uuid REFERENCES users (id),
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  deleted_at timestamptz(3),
  PRIMARY KEY (tenant_id, id)
);
CREATE INDEX api_keys_created_idx ON api_keys (tenant_id, created_at, id);

CREATE TABLE api_key_permissions (
  tenant_id uuid NOT NULL,
  api_key_id uuid NOT NULL,
  resource_code text NOT NULL,
  can_read boolean NOT NULL DEFAULT false,
  can_create boolean NOT NULL DEFAULT false,
  can_update boolean NOT NULL DEFAULT false,
  can_delete boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, api_key_id, resource_code),
  FOREIGN KEY (tenant_id, api_key_id) REFERENCES api_keys (tenant_id, id) ON DELETE CASCADE
);
`))
