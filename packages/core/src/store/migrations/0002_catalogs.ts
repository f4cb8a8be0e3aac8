import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Reference catalogs, global (not tenant-owned). Geography keeps stable integer
 * ids from the committed snapshots; the other catalogs use UUIDs derived from their codes.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
CREATE TABLE countries (
  id integer PRIMARY KEY,
  iso2 char(2) NOT NULL UNIQUE,
  iso3 char(3) NOT NULL UNIQUE,
  numeric_code char(3) NOT NULL,
  name_en text NOT NULL,
  name_pt text NOT NULL,
  name_es text NOT NULL,
  currency text,
  region text,
  phone_code text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', iso2 || ' ' || iso3 || ' ' || name_en || ' ' || name_pt || ' ' || name_es)
  ) STORED
);
CREATE INDEX countries_search_idx ON countries USING gin (search_vector);

CREATE TABLE states (
  id integer PRIMARY KEY,
  country_id integer NOT NULL REFERENCES countries (id),
  country_code char(2) NOT NULL,
  state_code text NOT NULL,
  name text NOT NULL,
  type text NOT NULL DEFAULT 'state',
  ibge_code text,
  fips_code text,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (to_tsvector('erp_search', state_code || ' ' || name)) STORED,
  UNIQUE (country_id, state_code)
);
CREATE INDEX states_search_idx ON states USING gin (search_vector);

CREATE TABLE cities (
  id integer PRIMARY KEY,
  country_id integer NOT NULL REFERENCES countries (id),
  state_id integer NOT NULL REFERENCES states (id),
  country_code char(2) NOT NULL,
  state_code text NOT NULL,
  name text NOT NULL,
  ibge_code text,
  geonames_id integer,
  population integer,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (to_tsvector('erp_search', name)) STORED
);
CREATE INDEX cities_state_idx ON cities (state_id, id);
CREATE INDEX cities_search_idx ON cities USING gin (search_vector);

CREATE TABLE units_of_measurement (
  id uuid PRIMARY KEY,
  code text NOT NULL UNIQUE,
  symbol text,
  fiscal_codes jsonb NOT NULL DEFAULT '{}',
  country_codes jsonb NOT NULL DEFAULT '[]',
  titles jsonb NOT NULL DEFAULT '{}',
  descriptions jsonb NOT NULL DEFAULT '{}',
  is_blocked boolean NOT NULL DEFAULT false,
  display_order integer NOT NULL DEFAULT 0,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', code || ' ' || coalesce(symbol, '')) || jsonb_to_tsvector('erp_search', titles, '["string"]')
      || jsonb_to_tsvector('erp_search', fiscal_codes, '["string"]')
  ) STORED
);
CREATE INDEX units_search_idx ON units_of_measurement USING gin (search_vector);

CREATE TABLE banks (
  id uuid PRIMARY KEY,
  code text NOT NULL,
  ispb text,
  name text NOT NULL,
  official_name text,
  swift_code text,
  country_code char(2) NOT NULL,
  logo_url text,
  aliases jsonb NOT NULL DEFAULT '[]',
  is_active boolean NOT NULL DEFAULT true,
  display_order integer NOT NULL DEFAULT 0,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', code || ' ' || name || ' ' || coalesce(official_name, '') || ' ' || coalesce(swift_code, ''))
      || jsonb_to_tsvector('erp_search', aliases, '["string"]')
  ) STORED,
  UNIQUE (country_code, code)
);
CREATE INDEX banks_swift_idx ON banks (swift_code);
CREATE INDEX banks_search_idx ON banks USING gin (search_vector);

CREATE TABLE payment_methods (
  id uuid PRIMARY KEY,
  code text NOT NULL UNIQUE,
  country_codes jsonb NOT NULL DEFAULT '[]',
  titles jsonb NOT NULL DEFAULT '{}',
  descriptions jsonb NOT NULL DEFAULT '{}',
  untdid_4461_code text,
  is_active boolean NOT NULL DEFAULT true,
  display_order integer NOT NULL DEFAULT 0,
  created_at timestamptz(3) NOT NULL DEFAULT now(),
  updated_at timestamptz(3) NOT NULL DEFAULT now(),
  search_vector tsvector GENERATED ALWAYS AS (
    to_tsvector('erp_search', code) || jsonb_to_tsvector('erp_search', titles, '["string"]')
  ) STORED
);
CREATE INDEX payment_methods_search_idx ON payment_methods USING gin (search_vector);
`))
