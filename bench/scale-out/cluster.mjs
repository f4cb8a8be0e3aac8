// The processes of the scale-out bench: PgBouncer in front of the primary, `erp serve` hosts,
// `erp worker`s and HAProxy in front of the hosts. Each runs from a temporary folder and is
// stopped (with every process it started) when the bench ends, however it ends.
import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { freePort, isRoot } from "../../scripts/postgres-pair.mjs"
import { processTree } from "../proc.mjs"

export { freePort }

const ERP = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../packages/cli/bin/erp.js")
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const waitForPort = async (port, what, ms = 20_000) => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, "127.0.0.1", () => { socket.destroy(); resolve(true) })
      socket.on("error", () => resolve(false))
    })
    if (open) return
    await sleep(100)
  }
  throw new Error(`${what} did not listen on ${port} within ${ms} ms`)
}

/** Every process and temporary folder the bench made, so that any exit (a failure too) removes them all. */
const children = new Set()
const folders = new Set()
export const stopEverything = () => {
  for (const child of children) killTree(child.pid, "SIGKILL")
  children.clear()
  for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true })
  folders.clear()
}

const tempFolder = (prefix) => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  folders.add(folder)
  return folder
}

/** SIGKILL (or `signal`) to `pid` and every process below it: the CLI's launcher runs erp in a child Node. */
export const killTree = (pid, signal = "SIGKILL") => {
  if (pid === undefined) return
  for (const member of processTree(pid).reverse()) {
    try {
      process.kill(member, signal)
    } catch {
      // Already gone.
    }
  }
}

const start = (command, args, options) => {
  const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options })
  children.add(child)
  child.on("exit", () => children.delete(child))
  let output = ""
  const keep = (chunk) => { output = (output + chunk.toString()).slice(-20_000) }
  child.stdout.on("data", keep)
  child.stderr.on("data", keep)
  child.output = () => output
  return child
}

/** PgBouncer in transaction mode in front of `upstream`, no startup parameter ignored. */
export const startPgBouncer = async (upstreamPort) => {
  const dir = tempFolder("erp-scale-pgbouncer-")
  const port = await freePort()
  fs.writeFileSync(path.join(dir, "pgbouncer.ini"), `[databases]
* = host=127.0.0.1 port=${upstreamPort}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir = ${dir}
auth_type = trust
auth_file = ${dir}/userlist.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = 60
logfile = ${dir}/pgbouncer.log
`)
  fs.writeFileSync(path.join(dir, "userlist.txt"), '"postgres" ""\n')
  if (isRoot()) execFileSync("chown", ["-R", "postgres", dir])
  const child = start("pgbouncer", isRoot() ? ["-u", "postgres", path.join(dir, "pgbouncer.ini")] : [path.join(dir, "pgbouncer.ini")], {})
  await waitForPort(port, "PgBouncer")
  return { port, url: `postgres://postgres@127.0.0.1:${port}/postgres`, pid: child.pid, stop: () => { killTree(child.pid, "SIGTERM"); fs.rmSync(dir, { recursive: true, force: true }); folders.delete(dir) } }
}

/** One `erp serve` on `port`, answering once it prints its URL; `start` starts it again on the same port after `kill`. */
export const startHost = async (port, env) => {
  const host = { port, url: `http://127.0.0.1:${port}`, child: undefined, pid: undefined }
  host.start = async () => {
    host.child = start(process.execPath, [ERP, "serve", "--port", String(port), "--no-webhooks", "--no-panel", "--json"], { env: { ...process.env, ...env } })
    host.pid = host.child.pid
    const deadline = Date.now() + 60_000
    while (!/"url"/.test(host.child.output())) {
      if (host.child.exitCode !== null) throw new Error(`erp serve on ${port} exited: ${host.child.output()}`)
      if (Date.now() > deadline) throw new Error(`erp serve on ${port} did not start: ${host.child.output()}`)
      await sleep(50)
    }
  }
  host.kill = () => killTree(host.pid, "SIGKILL")
  await host.start()
  return host
}

/** One `erp worker`, started once it prints the line naming its store. */
export const startWorker = async (env) => {
  const child = start(process.execPath, [ERP, "worker", "--concurrency", "8"], { env: { ...process.env, ...env } })
  const deadline = Date.now() + 60_000
  while (!/\S/.test(child.output())) {
    if (child.exitCode !== null) throw new Error(`erp worker exited: ${child.output()}`)
    if (Date.now() > deadline) throw new Error(`erp worker did not start: ${child.output()}`)
    await sleep(50)
  }
  return { pid: child.pid, output: child.output }
}

/**
 * HAProxy (Debian's), round robin over `hosts`, each checked on /health every 500 ms: out after 3
 * failed checks, back after 2 good ones. A check may take 2 s, since a host busy on two shared
 * cores answers late but answers. A connection refused or closed without an answer (a host killed
 * under it) is sent to another host; writes stay safe across that retry because every write the
 * bench sends carries an `Idempotency-Key`. `option forwardfor` appends the caller's address,
 * which the hosts read with ERP_TRUST_PROXY.
 */
export const startHaproxy = async (hosts, listenPort) => {
  const dir = tempFolder("erp-scale-haproxy-")
  const port = listenPort ?? await freePort()
  const socket = path.join(dir, "haproxy.sock")
  fs.writeFileSync(path.join(dir, "haproxy.cfg"), `global
  maxconn 4000
  stats socket ${socket} mode 600 level user
defaults
  mode http
  option forwardfor
  timeout connect 1s
  timeout client 30s
  timeout server 30s
  timeout check 2s
  retries 3
  option redispatch
  retry-on conn-failure empty-response
frontend api
  bind 127.0.0.1:${port}
  default_backend hosts
backend hosts
  balance roundrobin
  option httpchk GET /health
  http-check expect status 200
${hosts.map((host, index) => `  server host${index + 1} 127.0.0.1:${host.port} check inter 500 fall 3 rise 2`).join("\n")}
`)
  const child = start("haproxy", ["-f", path.join(dir, "haproxy.cfg"), "-db"], {})
  await waitForPort(port, "HAProxy")
  const stop = async () => {
    const exited = child.exitCode === null ? new Promise((resolve) => child.once("exit", resolve)) : Promise.resolve()
    killTree(child.pid, "SIGTERM")
    await exited
    fs.rmSync(dir, { recursive: true, force: true })
    folders.delete(dir)
  }
  return { port, url: `http://127.0.0.1:${port}`, pid: child.pid, stop, stats: () => haproxyStats(socket) }
}

/**
 * HAProxy's counters per server, from its stats socket: `stot` (requests sent to it), `wretr`
 * (connections retried), `wredis` (requests sent to another server instead), `status`.
 */
const haproxyStats = (socket) =>
  new Promise((resolve, reject) => {
    let text = ""
    const connection = net.connect(socket, () => connection.end("show stat\n"))
    connection.on("data", (chunk) => { text += chunk.toString() })
    connection.on("error", reject)
    connection.on("end", () => {
      const [header, ...lines] = text.trim().split("\n")
      const names = header.replace(/^# /, "").split(",")
      resolve(lines.map((line) => Object.fromEntries(line.split(",").map((value, index) => [names[index], value]))).filter((row) => row.pxname === "hosts"))
    })
  })

/** The postmaster's pid of a cluster folder: the backends it runs are its children, for their CPU. */
export const postmasterPid = (dataDir) => Number(fs.readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0])

export { ERP }
