import { Result } from "effect"
import { type McpToolset, MCP_TOOLSET_NAMES, parseMcpToolsets } from "../mcp/toolsets.js"
import { InvalidSetting } from "./load.js"
import { flag, httpUrl, type Kind, list, memorySize, oneOf, optionalSetting, secretSetting, type Setting, setting, text, wholeNumber } from "./setting.js"

/**
 * Every environment variable erp reads, each declared once with its type, default and
 * description. Services read them through the `ConfigProvider` in context (an embedding app may
 * provide its own); docs/configuration.md's table is made from these declarations.
 */

/** Origins, comma-separated, or `*` for every one. */
const origins: Kind<ReadonlyArray<string> | "*"> = {
  type: "comma-separated origins, or *",
  parse: (value, name) => (value === "*" ? Result.succeed("*") : list.parse(value, name))
}

const toolsets: Kind<ReadonlyArray<McpToolset> | undefined> = {
  type: "comma-separated toolsets",
  parse: (value, name) => {
    try {
      return Result.succeed(parseMcpToolsets(value, name))
    } catch (error) {
      if (error instanceof InvalidSetting) return Result.fail(error.message)
      throw error
    }
  }
}

export const storeSettings = {
  databaseUrl: secretSetting("DATABASE_URL", {
    type: "PostgreSQL URL (secret)",
    shown: "none: the embedded store",
    description: "The PostgreSQL database the data lives in (`--database-url` wins). Unset: the embedded PGlite store in `ERP_DATA_DIR`."
  }),
  readDatabaseUrls: secretSetting("ERP_DATABASE_READ_URL", {
    type: "PostgreSQL URLs, comma-separated (secret)",
    shown: "none: every read on `DATABASE_URL`",
    description: "Read replicas (streaming standbys) of `DATABASE_URL`: lists, gets and exports run on one; a credential's reads wait for its own writes to be replayed there (`ERP_READ_REPLICA_WAIT_MS`), else go to the primary."
  }),
  replicaWaitMs: setting("ERP_READ_REPLICA_WAIT_MS", wholeNumber(0), {
    default: 100,
    description: "Longest a credential's read waits, in ms, for a read replica to replay the credential's last write before it runs on the primary instead; 0 goes to the primary at once."
  }),
  dataDir: setting("ERP_DATA_DIR", text, {
    default: ".erp-data",
    description: "The embedded store's folder, from the working directory (`--data-dir` wins)."
  }),
  /**
   * PostgreSQL's own default is 128MB. PGlite zeroes the whole of PostgreSQL's shared memory each
   * time it opens a store, and the process keeps it: at 128MB that weighs on every host's start
   * and on its memory. A store that outgrows 32MB of hot pages still reads the
   * rest from the operating system's file cache.
   */
  embeddedSharedBuffers: setting("ERP_EMBEDDED_SHARED_BUFFERS", memorySize, {
    default: "32MB",
    description: "The embedded store's PostgreSQL buffer pool."
  }),
  poolSize: setting("ERP_DB_POOL_SIZE", wholeNumber(1), {
    default: 10,
    description: "PostgreSQL connections in each host's pool."
  }),
  poolWaitMs: setting("ERP_DB_POOL_WAIT_MS", wholeNumber(1), {
    default: 3_000,
    description: "Longest wait for a free PostgreSQL connection, in ms, before 503 `STORE_BUSY`."
  }),
  statementTimeoutMs: setting("ERP_STATEMENT_TIMEOUT_MS", wholeNumber(1), {
    default: 5_000,
    description: "Longest a PostgreSQL statement may run, in ms, before it is cancelled: 503 `STATEMENT_TIMEOUT`."
  }),
  preparedStatements: setting("ERP_PREPARED_STATEMENTS", wholeNumber(0), {
    default: 100,
    description: "Statement texts of fixed shape kept prepared on each PostgreSQL connection; 0 turns it off (`ERP_DB_POOLER=transaction` does)."
  }),
  pooler: setting<"session" | "transaction">("ERP_DB_POOLER", oneOf(["session", "transaction"]), {
    default: "session",
    description: "`transaction` behind a pooler in transaction mode (PgBouncer's `pool_mode = transaction`): no session state outlives a transaction (settings with `SET LOCAL` and the role's defaults, no prepared statements, cancels by the protocol)."
  }),
  tenantConcurrency: optionalSetting("ERP_TENANT_CONCURRENCY", wholeNumber(1), {
    shown: "4 on PostgreSQL, 1 on the embedded store",
    description: "Requests of one tenant in the store at once; the others wait their turn."
  }),
  tenantQueueMs: setting("ERP_TENANT_QUEUE_MS", wholeNumber(1), {
    default: 10_000,
    description: "Longest a request waits for its tenant's turn, in ms, before 429 `TOO_MANY_CONCURRENT_REQUESTS`."
  })
}

export const secretKeySettings = {
  secretKey: secretSetting("ERP_SECRET_KEY", {
    type: "32 bytes, base64 or hex (secret)",
    shown: "required with PostgreSQL; embedded store: `secret.key` in its folder",
    description: "The key sealing stored secrets (webhook secrets, signing keys); every host of one database has the same."
  }),
  previousSecretKey: secretSetting("ERP_SECRET_KEY_PREVIOUS", {
    type: "32 bytes, base64 or hex (secret)",
    shown: "none",
    description: "The key being rotated away from: what it sealed is sealed again under `ERP_SECRET_KEY` on start."
  })
}

export const oauthSettings = {
  publicUrl: optionalSetting("ERP_PUBLIC_URL", httpUrl, {
    shown: "each request's Host",
    description: "The public base URL, path included: the OAuth issuer and the base of every generated URL (`--public-url` wins)."
  }),
  dynamicRegistration: setting("ERP_DYNAMIC_REGISTRATION", flag, {
    default: true,
    description: "OAuth clients may register themselves at `POST /oauth/register` (RFC 7591); `--no-dynamic-registration` refuses it."
  }),
  registrationsPerMinute: setting("ERP_OAUTH_REGISTRATIONS_PER_MINUTE", wholeNumber(1), {
    default: 10,
    description: "Dynamic registrations one address may make a minute (more behind a shared address)."
  }),
  trustProxy: setting("ERP_TRUST_PROXY", flag, {
    default: false,
    description: "Limits per address take the caller from `X-Forwarded-For`'s last entry, the one your proxy appended: only behind one proxy of yours (`--trust-proxy`)."
  }),
  jwtIssuer: optionalSetting("ERP_JWT_ISSUER", text, {
    shown: "none",
    description: "An external identity provider whose JWTs authenticate REST calls: its issuer (with `ERP_JWT_AUDIENCE` and `ERP_JWT_JWKS_URL`)."
  }),
  jwtAudience: optionalSetting("ERP_JWT_AUDIENCE", text, {
    shown: "none",
    description: "The audience the identity provider's JWTs carry."
  }),
  jwtJwksUrl: optionalSetting("ERP_JWT_JWKS_URL", text, {
    shown: "none",
    description: "Where the identity provider publishes its keys (JWKS)."
  }),
  jwtAlgorithms: setting("ERP_JWT_ALGORITHMS", list, {
    default: ["RS256", "ES256"],
    shown: "`RS256,ES256`",
    description: "The signature algorithms its JWTs may use (`none` and HMAC never are)."
  }),
  jwtUserClaim: setting("ERP_JWT_USER_CLAIM", text, {
    default: "sub",
    description: "The claim naming the user: our user id, or the user's email when it holds an @."
  })
}

export const mcpSettings = {
  allowedOrigins: setting("ERP_MCP_ALLOWED_ORIGINS", origins, {
    default: [],
    shown: "none beyond loopback and the public URL's",
    description: "Browser origins allowed to call MCP over HTTP besides loopback ones and the public URL's; `*` allows every origin."
  }),
  sessionIdleSeconds: setting("ERP_MCP_SESSION_IDLE_SECONDS", wholeNumber(1), {
    default: 3_600,
    description: "How long an unused MCP session over HTTP lives, in seconds."
  }),
  toolsets: setting("ERP_MCP_TOOLSETS", toolsets, {
    default: undefined,
    shown: "every tool",
    description: `The MCP toolsets served, over HTTP and by \`erp mcp\` (\`--toolsets\` wins): ${MCP_TOOLSET_NAMES.join(", ")}.`
  })
}

export const webhookSettings = {
  allowPrivate: setting("ERP_WEBHOOKS_ALLOW_PRIVATE", flag, {
    default: false,
    description: "Webhook URLs may be http and reach private, loopback and link-local addresses: development and tests only (`--allow-private-webhooks`)."
  }),
  leaseSeconds: setting("ERP_WEBHOOKS_LEASE_SECONDS", wholeNumber(1), {
    default: 60,
    description: "How long a claimed delivery stays with a host or worker that stopped answering, in seconds."
  })
}

/** Read by the command line only. */
export const cliSettings = {
  port: setting("PORT", wholeNumber(0, 65_535), {
    default: 3_000,
    description: "`erp serve`: the port to listen on, 0 for any free one (`--port` wins)."
  }),
  host: setting("HOST", text, {
    default: "127.0.0.1",
    description: "`erp serve`: the address to listen on (`--host` wins)."
  }),
  apiKey: secretSetting("ERP_API_KEY", {
    type: "API key (secret)",
    shown: "none",
    description: "`erp mcp`: the API key whose permissions its tools have (`--api-key` wins)."
  }),
  mcpUser: optionalSetting("ERP_MCP_USER", text, {
    shown: "none",
    description: "`erp mcp`: act as this user (email or id) in each of their tenants (`--user` wins)."
  }),
  progressIntervalMs: setting("ERP_PROGRESS_INTERVAL_MS", wholeNumber(1), {
    default: 5_000,
    description: "How often a long command prints a progress line when stderr is not a terminal, in ms."
  })
}

/** The variables the core and the hosts read (all but the command line's own). */
export const CORE_SETTINGS: ReadonlyArray<Setting<unknown>> = [
  ...Object.values(storeSettings),
  ...Object.values(secretKeySettings),
  ...Object.values(oauthSettings),
  ...Object.values(mcpSettings),
  ...Object.values(webhookSettings)
]

/** Every variable, in the order the configuration table lists them. */
export const ALL_SETTINGS: ReadonlyArray<Setting<unknown>> = [...CORE_SETTINGS, ...Object.values(cliSettings)]
