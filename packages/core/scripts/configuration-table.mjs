#!/usr/bin/env node
// Writes the table of every environment variable into docs/configuration.md, between its two
// markers, from the declarations in src/config/variables.ts (reads the built dist: run tsc -b
// first). A test fails while the two differ.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { configurationTable } from "../dist/index.js"

const docs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../docs/configuration.md")
const START = "<!-- table: made by packages/core/scripts/configuration-table.mjs -->"
const END = "<!-- end of table -->"

const text = fs.readFileSync(docs, "utf8")
const start = text.indexOf(START)
const end = text.indexOf(END)
if (start < 0 || end < start) throw new Error(`${docs} lacks the markers ${START} and ${END}`)
fs.writeFileSync(docs, `${text.slice(0, start + START.length)}\n${configurationTable()}${text.slice(end)}`)
process.stdout.write(`wrote the table into ${docs}\n`)
