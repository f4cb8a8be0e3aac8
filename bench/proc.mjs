// CPU and memory of a process and the processes it started, from Linux's /proc. `erp serve`,
// `export` and `import` run in a Node of their own under the launcher (packages/cli/bin/erp.js),
// so what a command costs is the sum over its process tree.
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"

const CLOCK_TICKS = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout.trim()) || 100

/** The fields of /proc/<pid>/stat after the command name (state is [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14]). */
const statOf = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  } catch {
    return undefined
  }
}

/** `pid` and every process below it that is still running. */
export const processTree = (pid) => {
  const parents = new Map()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    const fields = statOf(entry)
    if (fields) parents.set(Number(entry), Number(fields[1]))
  }
  const tree = [pid]
  for (let index = 0; index < tree.length; index++) {
    for (const [child, parent] of parents) if (parent === tree[index]) tree.push(child)
  }
  return tree
}

/**
 * User + system CPU in ms: of `pid` and the processes below it (`tree`, the default), of `pid`
 * alone (`self`), or of the children `pid` has waited for (`children`).
 */
export const cpuMs = (pid, whose = "tree") => {
  const ticks = (fields, at) => (fields ? Number(fields[at]) + Number(fields[at + 1]) : 0)
  const total = whose === "tree"
    ? processTree(pid).reduce((sum, member) => sum + ticks(statOf(member), 11), 0)
    : ticks(statOf(pid), whose === "self" ? 11 : 13)
  return (total * 1000) / CLOCK_TICKS
}

/** The largest peak resident memory (VmHWM) in KiB among `pid` and the processes below it. */
export const peakRssKb = (pid) =>
  Math.max(0, ...processTree(pid).map((member) => {
    try {
      return Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${member}/status`, "utf8"))?.[1] ?? 0)
    } catch {
      return 0
    }
  }))
