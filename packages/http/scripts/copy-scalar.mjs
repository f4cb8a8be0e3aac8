#!/usr/bin/env node
// Copies Scalar's standalone API reference bundle (one self-contained browser script that defines
// `window.Scalar`) from the `@scalar/api-reference` dev dependency into assets/scalar/, where
// src/docs-page.ts serves it as `/docs/scalar.js`. The package itself, with the hundred-odd
// packages it depends on for its Vue components, is not needed at run time: only this file.
// Run by `npm run build` (and `npm run bundle`). Built output, never committed.
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const httpDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const target = path.join(httpDir, "assets", "scalar")

// The package exports no path to the bundle: it lies beside the entry point it exports (dist/index.js).
const entry = createRequire(import.meta.url).resolve("@scalar/api-reference")
const source = path.join(path.dirname(entry), "browser", "standalone.js")
let dir = path.dirname(entry)
while (!fs.existsSync(path.join(dir, "package.json"))) dir = path.dirname(dir)
const manifest = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"))

const notice = `The file standalone.js here is the standalone browser bundle of ${manifest.name} ${manifest.version}
(${manifest.homepage}), copied unchanged from its npm package, under its ${manifest.license} licence.
The licences of the code it bundles are kept in its own comments.

Copyright (c) Scalar

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM,
DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT
OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
`

fs.mkdirSync(target, { recursive: true })
for (const [name, write] of [["standalone.js", (file) => fs.copyFileSync(source, file)], ["NOTICE.md", (file) => fs.writeFileSync(file, notice)]]) {
  const partial = path.join(target, `${name}.partial-${process.pid}`)
  write(partial)
  fs.renameSync(partial, path.join(target, name))
}
