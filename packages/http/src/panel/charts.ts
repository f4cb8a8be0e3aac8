import BigNumber from "bignumber.js"
import { html, type Html } from "../html.js"
import type { PanelContext } from "./layout.js"

/**
 * Charts drawn as SVG on the server: no script, nothing the strict CSP refuses (geometry
 * attributes and the stylesheet's classes only), and few SVG elements (`svg`, `rect`, `text`,
 * `polyline`, `title`): grid lines and balance points are thin or small rectangles. Each scales to its container (`viewBox`, width
 * 100%), so a phone shows the whole chart; the figures are in a table beside it.
 */

const WIDTH = 640
const HEIGHT = 240
const LEFT = 72
const RIGHT = 12
const TOP = 12
const BOTTOM = 28
const PLOT_WIDTH = WIDTH - LEFT - RIGHT
const PLOT_HEIGHT = HEIGHT - TOP - BOTTOM
/** A column is never wider than this, however few there are. */
const MAX_BAR = 96

/** Geometry only: amounts become coordinates, never money. */
const number = (value: BigNumber.Value) => new BigNumber(value).toNumber()

const short = (value: number) => {
  const size = Math.abs(value)
  if (size >= 1e6) return `${(value / 1e6).toFixed(1)}M`
  if (size >= 1e3) return `${(value / 1e3).toFixed(1)}k`
  return value.toFixed(0)
}

/** A value axis from `low` to `high` (zero always inside): y of a value, and the labelled lines. */
const axis = (values: ReadonlyArray<number>) => {
  let high = Math.max(0, ...values)
  let low = Math.min(0, ...values)
  if (high === low) high = low + 1
  const span = high - low
  high += span * 0.05
  low -= low < 0 ? span * 0.05 : 0
  const y = (value: number) => TOP + ((high - value) / (high - low)) * PLOT_HEIGHT
  const lines = [...new Set([high, 0, low])].map((value) => html`
    <rect class="grid-line" x="${LEFT}" y="${(y(value) - 0.5).toFixed(1)}" width="${PLOT_WIDTH}" height="1"></rect>
    <text class="axis end" x="${LEFT - 6}" y="${(y(value) + 4).toFixed(1)}">${short(value)}</text>`)
  return { y, lines }
}

/** Labels under every n-th slot, so they never overlap. */
const slotLabels = (labels: ReadonlyArray<string>, slot: number) => {
  const every = Math.max(1, Math.ceil(labels.length / 8))
  return labels.map((label, index) =>
    index % every === 0
      ? html`<text class="axis middle" x="${(LEFT + slot * index + slot / 2).toFixed(1)}" y="${HEIGHT - 8}" >${label}</text>`
      : html``)
}

export interface FlowPeriod {
  readonly start: string
  readonly in: string
  readonly out: string
  readonly balance: string
}

/** Money in (up) and out (down) per period as bars, and the balance at each period's end as a line. */
export const flowChart = (ctx: Pick<PanelContext, "t">, periods: ReadonlyArray<FlowPeriod>, id: string, title: string): Html => {
  const { t } = ctx
  const slot = PLOT_WIDTH / Math.max(1, periods.length)
  const bar = Math.min(MAX_BAR / 2, Math.max(1, slot * 0.35))
  const { y, lines } = axis(periods.flatMap((period) => [number(period.in), -number(period.out), number(period.balance)]))
  const zero = y(0)
  const bars = periods.map((period, index) => {
    const x = LEFT + slot * index + slot / 2
    const inflow = number(period.in)
    const outflow = number(period.out)
    return html`
      <rect class="in" x="${(x - bar).toFixed(1)}" y="${y(inflow).toFixed(1)}" width="${bar.toFixed(1)}" height="${Math.max(0, zero - y(inflow)).toFixed(1)}"><title>${period.start}: ${t("money in")} ${period.in}</title></rect>
      <rect class="out" x="${x.toFixed(1)}" y="${zero.toFixed(1)}" width="${bar.toFixed(1)}" height="${Math.max(0, y(-outflow) - zero).toFixed(1)}"><title>${period.start}: ${t("money out")} ${period.out}</title></rect>`
  })
  const points = periods.map((period, index) => `${(LEFT + slot * index + slot / 2).toFixed(1)},${y(number(period.balance)).toFixed(1)}`).join(" ")
  return html`
    <div class="chart">
      <svg id="${id}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title">
        <title id="${id}-title">${title}: ${t("Money in and out per period, and the balance")}</title>
        ${lines}${bars}
        <polyline class="balance" points="${points}"></polyline>
        ${periods.map((period, index) => html`<rect class="balance-point" x="${(LEFT + slot * index + slot / 2 - 3).toFixed(1)}" y="${(y(number(period.balance)) - 3).toFixed(1)}" width="6" height="6"><title>${period.start}: ${t("Balance")} ${period.balance}</title></rect>`)}
        ${slotLabels(periods.map((period) => period.start.slice(5)), slot)}
      </svg>
      <p class="legend"><span class="key in"></span>${t("In")} <span class="key out"></span>${t("Out")} <span class="key balance"></span>${t("Balance")}</p>
    </div>`
}

export interface StackedColumn {
  readonly label: string
  /** One amount per series, in the series' order. */
  readonly amounts: ReadonlyArray<string>
}

/** A bar per column, stacked by series (at most five, each its own colour), with a legend naming them. */
export const stackedChart = (columns: ReadonlyArray<StackedColumn>, series: ReadonlyArray<string>, id: string, title: string, description: string): Html => {
  const slot = PLOT_WIDTH / Math.max(1, columns.length)
  const bar = Math.min(MAX_BAR, Math.max(1, slot * 0.6))
  // Positive amounts stack up from zero and negative ones (a credit, say) down from it, so the axis spans both sums.
  const sums = columns.flatMap((column) => {
    const values = column.amounts.map(number)
    return [values.filter((value) => value > 0).reduce((sum, value) => sum + value, 0), values.filter((value) => value < 0).reduce((sum, value) => sum + value, 0)]
  })
  const { y, lines } = axis(sums)
  const bars = columns.map((column, index) => {
    const x = LEFT + slot * index + (slot - bar) / 2
    let up = 0
    let down = 0
    return column.amounts.map((amount, at) => {
      const value = number(amount)
      const base = value < 0 ? down : up
      const top = Math.min(y(base), y(base + value))
      const height = Math.abs(y(base) - y(base + value))
      if (value < 0) down += value
      else up += value
      return html`<rect class="series-${at}" x="${x.toFixed(1)}" y="${top.toFixed(1)}" width="${bar.toFixed(1)}" height="${height.toFixed(1)}"><title>${column.label}, ${series[at]}: ${amount}</title></rect>`
    })
  })
  return html`
    <div class="chart">
      <svg id="${id}" viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${id}-title">
        <title id="${id}-title">${title}: ${description}</title>
        ${lines}${bars}
        ${slotLabels(columns.map((column) => column.label), slot)}
      </svg>
      <p class="legend">${series.map((name, at) => html`<span class="key series-${at}"></span>${name} `)}</p>
    </div>`
}
