import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * Signing private keys are kept sealed (`SecretBox`: AES-256-GCM, a text value), not as
 * clear JSON. Rows this migration finds stay clear until the host's start-up
 * seals them (`store/sealed-secrets.ts`), which needs the key a migration does not have.
 *
 * And grants of the MCP resource bind no company (their JWTs name only the user, who
 * picks the company per call, within each role), so their codes and tokens may have none.
 */
export default Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`
ALTER TABLE oauth_signing_keys ALTER COLUMN private_jwk TYPE text USING private_jwk::text;
ALTER TABLE oauth_signing_keys RENAME COLUMN private_jwk TO private_key_sealed;
ALTER TABLE oauth_authorization_codes ALTER COLUMN tenant_id DROP NOT NULL;
ALTER TABLE oauth_tokens ALTER COLUMN tenant_id DROP NOT NULL;
`))
