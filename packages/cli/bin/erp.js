#!/usr/bin/env node
import { isAscii } from "node:buffer"
import { spawn } from "node:child_process"
import { readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import Module from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import vm from "node:vm"

// Node keeps the compiled code of the modules between runs (in the system's temporary folder):
// the compiled modules in dist/ start sooner from the second run on.
Module.enableCompileCache()

/**
 * Export and import stream whole data sets. Left alone, V8 lets the heap grow to several
 * hundred MB of garbage between collections; with a small heap they run in flat memory at
 * the same speed (bench/README.md). The old space starts at 48 MB, with room above what the
 * program holds: sized from that alone, V8 would run a full collection after every few MB of
 * range text, which would take much of an export's CPU. V8 takes heap limits only at start, so
 * this launcher (which loads nothing else) runs them in a Node of their own, unless the user
 * chose a limit.
 */
const STREAMING = new Set(["export", "import"])
const HEAP_FLAGS = ["--max-old-space-size=128", "--max-semi-space-size=1", "--initial-old-space-size=48"]
/** Commands that run for long or work through much data, with the optimised code of the embedded store. */
const LONG_RUNNING = new Set(["serve", "mcp", "worker", "export", "import", "seed", "store"])
/** Commands that serve until stopped: each keeps a code cache of its own, per store. */
const HOSTS = new Set(["serve", "mcp", "worker"])
const GLOBAL_OPTIONS_WITH_VALUE = new Set(["--database-url", "--data-dir"])

const commandOf = (args) => {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]
    if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) index++
    else if (!arg.startsWith("-")) return arg
  }
  return undefined
}

/**
 * `npm run build` bundles the CLI into one file (scripts/bundle.mjs). A `tsc -b` run since then
 * (a package's build info is newer) means the bundle may hold older code, and the compiled
 * modules in dist/ run instead.
 */
const bundleFile = fileURLToPath(new URL("../dist/bundle/main.cjs", import.meta.url))
const bundleIsCurrent = () => {
  const modified = (relative) => statSync(new URL(relative, import.meta.url), { throwIfNoEntry: false })?.mtimeMs
  const bundled = modified("../dist/bundle/main.cjs")
  if (bundled === undefined) return false
  return ["core", "http", "mcp", "cli"].every((name) => (modified(`../../${name}/dist/.tsbuildinfo`) ?? 0) <= bundled)
}

/**
 * Runs the bundle with V8's code cache: its megabytes are not parsed again on every start. Node's own
 * compile cache (a plain require of the bundle) starts a command later (bench/README.md), and
 * keeps one cache per file where a host needs one per kind of command. The cache holds the functions the run that wrote it had
 * compiled, so each kind of command keeps one of its own (a host on the embedded store and one on
 * PostgreSQL run different code: with the other's cache, the embedded host starts later).
 * It is written at exit when missing or refused (V8 refuses a cache of another bundle or another
 * Node), to a temporary name renamed over the old one, and silently not at all where the folder
 * is not writable. A host's (`grow`) is also written again when its run compiled much more than
 * the cache held: a first run that stopped early (a port in use) would otherwise leave every later
 * start compiling the rest itself.
 */
const loadBundle = (cacheName, { grow = false } = {}) => {
  const cacheFile = path.join(path.dirname(bundleFile), cacheName)
  const cachedData = statSync(cacheFile, { throwIfNoEntry: false }) ? readFileSync(cacheFile) : undefined
  // The build leaves the bundle ASCII alone (scripts/bundle.mjs): read so, as Latin-1, it decodes far faster than as UTF-8.
  const bytes = readFileSync(bundleFile)
  const source = bytes.toString(isAscii(bytes) ? "latin1" : "utf8")
  const script = new vm.Script(Module.wrap(source), { filename: bundleFile, cachedData })
  const stale = cachedData === undefined || script.cachedDataRejected
  if (stale || grow) {
    process.once("exit", () => {
      try {
        const data = script.createCachedData()
        // Grown by a tenth or more: a start cut short by a port in use leaves a cache about that much
        // smaller than a whole start's; less is not worth the write.
        if (!stale && data.length < cachedData.length * 1.1) return
        const partial = `${cacheFile}.${process.pid}`
        writeFileSync(partial, data)
        renameSync(partial, cacheFile)
      } catch {}
    })
  }
  const bundled = { exports: {} }
  script.runInThisContext()(bundled.exports, Module.createRequire(bundleFile), bundled, bundleFile, path.dirname(bundleFile))
  return bundled.exports
}

const args = process.argv.slice(2)
const chosen = (name) => [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((flag) => flag.startsWith(name))
const LAUNCHED = "ERP_LAUNCHED_BY"

/**
 * Runs this command in a Node of its own with `flags` (V8 takes them only at start) and stands in
 * for it: signals are passed on, its exit is this process's exit. Should this process be killed
 * outright, the command sees its channel close and stops as on SIGTERM, rather than run on alone.
 */
const runWithFlags = (flags) => {
  const child = spawn(process.execPath, [...process.execArgv, ...flags, fileURLToPath(import.meta.url), ...args], {
    stdio: ["inherit", "inherit", "inherit", "ipc"],
    env: { ...process.env, [LAUNCHED]: String(process.pid) }
  })
  const forward = (signal) => child.kill(signal)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward)
  child.on("exit", (code, signal) => {
    for (const name of ["SIGINT", "SIGTERM", "SIGHUP"]) process.off(name, forward)
    if (signal) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
}

if (process.env[LAUNCHED] !== undefined && process.channel) {
  delete process.env[LAUNCHED]
  process.channel.unref()
  process.once("disconnect", () => process.kill(process.pid, "SIGTERM"))
}

/** Whether the command runs on PostgreSQL (`DATABASE_URL` or `--database-url`) rather than the embedded store. */
function onPostgresStore() {
  return Boolean(process.env.DATABASE_URL) || args.some((arg) => arg === "--database-url" || arg.startsWith("--database-url="))
}

/** A command of a second or two on the embedded store: not a host, nor a data job. */
function shortOnEmbedded() {
  return !LONG_RUNNING.has(commandOf(args)) && !onPostgresStore()
}

if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // What commander would print, without loading every command and the core it needs.
  const { VERSION } = await import("../dist/version.js")
  process.stdout.write(`${VERSION}\n`)
} else if (STREAMING.has(commandOf(args)) && !chosen("--max-old-space-size")) {
  runWithFlags(HEAP_FLAGS)
} else if (shortOnEmbedded() && !chosen("--liftoff-only")) {
  // The embedded store is PostgreSQL compiled to WebAssembly. V8 compiles it quickly first, then
  // again, optimised, on other threads, and a process does not end before those threads are done:
  // worth it for a host or a data job, not for a command of a second, which would wait seconds at
  // its exit for code it never runs. V8 reads this flag when it starts (set later, it is ignored),
  // so the command runs in a Node started with it. On PostgreSQL there is no WebAssembly.
  runWithFlags(["--liftoff-only"])
} else {
  const command = commandOf(args)
  const onPostgres = onPostgresStore()
  const short = shortOnEmbedded()
  const host = HOSTS.has(command)
  // V8 refuses a cache made under other flags: export and import (run with their own heap limits) and
  // the short commands keep theirs.
  const cacheName = host ? `${command}-${onPostgres ? "postgres" : "embedded"}` : STREAMING.has(command) ? "streaming" : short ? "short" : "main"
  const { main } = bundleIsCurrent() ? loadBundle(`${cacheName}.v8-cache`, { grow: host }) : await import("../dist/main.js")
  main(process.argv)
}
