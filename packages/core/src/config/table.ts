import { ALL_SETTINGS } from "./variables.js"
import type { Setting } from "./setting.js"

const cell = (value: string) => value.replace(/\|/g, "\\|").replace(/\n/g, " ")

/** The configuration table of docs/configuration.md, made from the declarations (a test keeps the two the same). */
export const configurationTable = (settings: ReadonlyArray<Setting<unknown>> = ALL_SETTINGS): string =>
  [
    "| Variable | Type | Default | Description |",
    "| --- | --- | --- | --- |",
    ...settings.map((entry) => `| \`${entry.name}\` | ${cell(entry.type)} | ${entry.default === "" ? "" : cell(entry.default)} | ${cell(entry.description)} |`)
  ].join("\n") + "\n"
