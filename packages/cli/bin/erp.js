#!/usr/bin/env node
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

/**
 * Export and import stream whole data sets. Left alone, V8 lets the heap grow to several
 * hundred MB of garbage between collections; with a small heap they run in flat memory at
 * the same speed (bench/README.md). V8 takes heap limits only at start, so this launcher
 * (which loads nothing else) runs them in a Node of their own, unless the user chose a limit.
 */
const STREAMING = new Set(["export", "import"])
const HEAP_FLAGS = ["--max-old-space-size=128", "--max-semi-space-size=2"]
const GLOBAL_OPTIONS_WITH_VALUE = new Set(["--database-url", "--data-dir"])

const commandOf = (args) => {
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]
    if (GLOBAL_OPTIONS_WITH_VALUE.has(arg)) index++
    else if (!arg.startsWith("-")) return arg
  }
  return undefined
}

const args = process.argv.slice(2)
const limitChosen = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? "").split(/\s+/)].some((flag) => flag.startsWith("--max-old-space-size"))

if (STREAMING.has(commandOf(args)) && !limitChosen) {
  const child = spawn(process.execPath, [...process.execArgv, ...HEAP_FLAGS, fileURLToPath(import.meta.url), ...args], { stdio: "inherit" })
  const forward = (signal) => child.kill(signal)
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, forward)
  child.on("exit", (code, signal) => {
    for (const name of ["SIGINT", "SIGTERM", "SIGHUP"]) process.off(name, forward)
    if (signal) process.kill(process.pid, signal)
    else process.exit(code ?? 1)
  })
} else {
  const { main } = await import("../dist/main.js")
  main(process.argv)
}
