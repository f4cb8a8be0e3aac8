// A PostgreSQL primary and a streaming standby made from it with pg_basebackup, each a cluster
// of its own in a temporary folder on free local ports: what the read-replica tests and the
// scale-out bench run against. It needs PostgreSQL's server programs (initdb, pg_ctl,
// pg_basebackup); as root it runs them as the `postgres` user, since PostgreSQL refuses root.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"

/** Thrown when this machine cannot make the pair; the message says what is missing. */
export class PairUnavailable extends Error {}

const serverBin = () => {
  const candidates = []
  try {
    candidates.push(execFileSync("pg_config", ["--bindir"], { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim())
  } catch {
    // pg_config is the client package's; the server's own folders are tried below.
  }
  const versions = fs.existsSync("/usr/lib/postgresql") ? fs.readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a)) : []
  for (const version of versions) candidates.push(`/usr/lib/postgresql/${version}/bin`)
  const found = candidates.find((dir) => ["initdb", "pg_ctl", "pg_basebackup"].every((name) => fs.existsSync(path.join(dir, name))))
  if (!found) throw new PairUnavailable("PostgreSQL's server programs (initdb, pg_ctl, pg_basebackup) are not installed")
  return found
}

/** Whether this process runs as root, where PostgreSQL and PgBouncer must run as the `postgres` user. */
export const isRoot = () => typeof process.getuid === "function" && process.getuid() === 0

/** A TCP port on 127.0.0.1 that nothing listens on now. */
export const freePort = () =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/**
 * Starts the pair and answers `{ primaryUrl, standbyUrl, pauseReplay, resumeReplay, stop }`.
 * `settings` are extra `postgresql.conf` lines for both clusters.
 */
export const startPostgresPair = async ({ settings = [] } = {}) => {
  const bin = serverBin()
  const asPostgres = isRoot()
  if (asPostgres) {
    try {
      execFileSync("id", ["postgres"], { stdio: "ignore" })
    } catch {
      throw new PairUnavailable("running as root, and there is no postgres user to run the clusters as")
    }
  }
  const run = (program, args) => {
    const command = asPostgres ? ["runuser", ["-u", "postgres", "--", path.join(bin, program), ...args]] : [path.join(bin, program), args]
    return execFileSync(command[0], command[1], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "erp-pg-pair-"))
  fs.chmodSync(dir, 0o755)
  if (asPostgres) execFileSync("chown", ["postgres", dir])
  const primary = path.join(dir, "primary")
  const standby = path.join(dir, "standby")
  const [primaryPort, standbyPort] = [await freePort(), await freePort()]
  const started = []
  const stop = () => {
    for (const folder of started.reverse()) {
      try {
        run("pg_ctl", ["stop", "-D", folder, "-m", "immediate", "-w"])
      } catch {
        // Already gone.
      }
    }
    started.length = 0
    fs.rmSync(dir, { recursive: true, force: true })
  }
  const conf = (port) => [
    `port = ${port}`,
    "listen_addresses = '127.0.0.1'",
    `unix_socket_directories = '${dir}'`,
    "wal_level = replica",
    "max_wal_senders = 5",
    "hot_standby = on",
    "hot_standby_feedback = on",
    // Throwaway clusters: durability buys nothing here. Commits still write their WAL at once
    // (synchronous_commit stays on), so the standby receives each write as a real one would.
    "fsync = off",
    "full_page_writes = off",
    "max_connections = 200",
    ...settings
  ].join("\n") + "\n"
  try {
    run("initdb", ["-D", primary, "-U", "postgres", "--auth=trust", "-N", "-E", "UTF8", "--locale=C"])
    fs.appendFileSync(path.join(primary, "postgresql.conf"), conf(primaryPort))
    fs.appendFileSync(path.join(primary, "pg_hba.conf"), "host replication all 127.0.0.1/32 trust\n")
    run("pg_ctl", ["start", "-D", primary, "-w", "-l", path.join(dir, "primary.log")])
    started.push(primary)
    run("pg_basebackup", ["-h", "127.0.0.1", "-p", String(primaryPort), "-U", "postgres", "-D", standby, "-R", "-X", "stream", "-c", "fast"])
    fs.appendFileSync(path.join(standby, "postgresql.conf"), `port = ${standbyPort}\n`)
    run("pg_ctl", ["start", "-D", standby, "-w", "-l", path.join(dir, "standby.log")])
    started.push(standby)
  } catch (error) {
    const log = ["primary.log", "standby.log"].map((name) => path.join(dir, name)).filter((file) => fs.existsSync(file)).map((file) => fs.readFileSync(file, "utf8").slice(-2000)).join("\n")
    stop()
    throw new Error(`The primary and standby did not start: ${error instanceof Error ? error.message : String(error)}\n${log}`)
  }
  const psql = (port, statement) => run("psql", ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-Atqc", statement]).trim()
  return {
    dir,
    primaryPort,
    standbyPort,
    primaryUrl: `postgres://postgres@127.0.0.1:${primaryPort}/postgres`,
    standbyUrl: `postgres://postgres@127.0.0.1:${standbyPort}/postgres`,
    /** Stops applying the primary's WAL on the standby: it keeps receiving, and answers from what it had. */
    pauseReplay: () => psql(standbyPort, "SELECT pg_wal_replay_pause()"),
    resumeReplay: () => psql(standbyPort, "SELECT pg_wal_replay_resume()"),
    /** Stops the standby at once, as a crash would; `startStandby` brings it back. */
    stopStandby: () => run("pg_ctl", ["stop", "-D", standby, "-m", "immediate", "-w"]),
    startStandby: () => run("pg_ctl", ["start", "-D", standby, "-w", "-l", path.join(dir, "standby.log")]),
    /** Runs one statement on the primary or the standby and answers its text. */
    psql: (which, statement) => psql(which === "standby" ? standbyPort : primaryPort, statement),
    stop
  }
}
