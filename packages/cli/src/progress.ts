import { cliSettings, loadConfigSync } from "@erp/core"

/**
 * Progress of a long command on stderr: one line rewritten in place on a terminal,
 * plain periodic lines otherwise (logs, CI), so stdout stays the command's output.
 */
export interface Progress {
  /** Counts `n` more units (rows, records). */
  readonly add: (n?: number) => void
  /** Names what is being done now (`sales-orders`), keeping the count. */
  readonly stage: (label: string) => void
  readonly count: () => number
  /** How many units the whole job is, once known (an export counts its rows first); shown as a percentage and time left. */
  readonly expect: (total: number) => void
  /** Stops reporting; answers the elapsed seconds and the overall rate. */
  readonly finish: () => { readonly seconds: number; readonly perSecond: number }
}

/**
 * A whole number with thousands separators (`1,000,000`). Not `toLocaleString`: its first call
 * loads the locale data, a cost on every command's start where a help text shows a count.
 */
export const formatCount = (value: number): string => String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")

/** How often a plain line is printed when stderr is not a terminal (ERP_PROGRESS_INTERVAL_MS). */
const plainInterval = () => loadConfigSync(cliSettings.progressIntervalMs.config)

const BAR_WIDTH = 24

/** `[#######-----] 42%` and the time left at the rate so far; never 100% before the job says it is done. */
const share = (done: number, expected: number, perSecond: number, tty: boolean) => {
  const fraction = Math.min(done / expected, 0.99)
  const filled = Math.round(fraction * BAR_WIDTH)
  const bar = tty ? `[${"#".repeat(filled)}${"-".repeat(BAR_WIDTH - filled)}] ` : ""
  const left = perSecond > 0 ? Math.max(expected - done, 0) / perSecond : Number.NaN
  const eta = Number.isFinite(left) ? `, ${left < 90 ? `${Math.ceil(left)} s` : `${Math.ceil(left / 60)} min`} left` : ""
  return `${bar}${Math.floor(fraction * 100)}%${eta}`
}

export const startProgress = (
  label: string,
  options: { readonly unit?: string; readonly quiet?: boolean; readonly expected?: number } = {}
): Progress => {
  const unit = options.unit ?? "rows"
  const started = Date.now()
  const tty = process.stderr.isTTY === true
  let current = label
  let total = 0
  let expected = options.expected ?? 0
  let lastDrawn = 0
  const line = () => {
    const seconds = Math.max((Date.now() - started) / 1000, 0.001)
    const rate = total / seconds
    const part = expected > 0 ? ` ${share(total, expected, rate, tty)}` : ""
    return `${current}:${part} ${formatCount(total)} ${unit}, ${formatCount(rate)} ${unit}/s, ${seconds.toFixed(1)} s`
  }
  const draw = () => {
    if (options.quiet) return
    if (tty) process.stderr.write(`\r\x1b[2K${line()}`)
    else process.stderr.write(`${line()}\n`)
  }
  const timer = options.quiet ? undefined : setInterval(() => {
    if (!tty) draw()
  }, plainInterval())
  timer?.unref()
  return {
    add: (n = 1) => {
      total += n
      const now = Date.now()
      if (tty && now - lastDrawn > 100) {
        lastDrawn = now
        draw()
      }
    },
    stage: (next) => {
      current = next
      if (tty) draw()
    },
    count: () => total,
    expect: (next) => {
      expected = next
    },
    finish: () => {
      if (timer) clearInterval(timer)
      if (tty && !options.quiet) process.stderr.write("\r\x1b[2K")
      const seconds = (Date.now() - started) / 1000
      return { seconds, perSecond: seconds > 0 ? total / seconds : total }
    }
  }
}
