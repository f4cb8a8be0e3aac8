#!/usr/bin/env node
import { spawn } from "node:child_process"
import { statSync } from "node:fs"
import module from "node:module"
import { fileURLToPath } from "node:url"

// Node 22.1 and later keep the compiled code of the modules between runs (in the system's
// temporary folder): a command starts sooner from the second run on. Node 20 has no such cache.
module.enableCompileCache?.()

/**
 * Export and import stream whole data sets. Left alone, V8 lets the heap grow to several
 * hundred MB of garbage between collections; with a small heap they run in flat memory at
 * the same speed (bench/README.md). V8 takes heap limits only at start, so this launcher
 * (which loads nothing else) runs them in a Node of their own, unless the user chose a limit.
 */
const STREAMING = new Set(["export", "import"])
const HEAP_FLAGS = ["--max-old-space-size=128", "--max-semi-space-size=8"]
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
 * `npm run build` bundles the CLI (scripts/bundle.mjs): it starts in half the time. A `tsc -b`
 * run since then (a package's build info is newer) means the bundle may hold older code, and
 * the compiled modules run instead.
 */
const bundleIsCurrent = () => {
  const modified = (relative) => statSync(new URL(relative, import.meta.url), { throwIfNoEntry: false })?.mtimeMs
  const bundled = modified("../dist/bundle/main.js")
  if (bundled === undefined) return false
  return ["core", "http", "mcp", "cli"].every((name) => (modified(`../../${name}/dist/.tsbuildinfo`) ?? 0) <= bundled)
}

const args = process.argv.slice(2)
const limitChosen = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((flag) => flag.startsWith("--max-old-space-size"))

const compiled = bundleIsCurrent() ? "../dist/bundle/" : "../dist/"

if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // What commander would print, without loading every command and the core it needs.
  const { VERSION } = await import(`${compiled}version.js`)
  process.stdout.write(`${VERSION}\n`)
} else if (STREAMING.has(commandOf(args)) && !limitChosen) {
  const child = spawn(process.execPath, [...process.execArgv, ...HEAP_FLAGS, fileURLToPath(import.meta.url), ...args], { stdio: "inherit" })
  const forward = (signal) => child.kill(signal)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward)
  child.on("exit", (code, signal) => {
    for (const name of ["SIGINT", "SIGTERM", "SIGHUP"]) process.off(name, forward)
    if (signal) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
} else {
  const { main } = await import(`${compiled}main.js`)
  main(process.argv)
}
