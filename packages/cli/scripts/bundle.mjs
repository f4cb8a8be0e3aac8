#!/usr/bin/env node
// Bundles the built CLI (dist/main.js and everything it imports, PGlite excepted) into one
// CommonJS file, dist/bundle/main.cjs, so that a command starts without resolving and compiling
// the thousand-odd module files of effect, @effect/* and our packages, and with V8's code cache
// (bin/erp.js): work every command's start would otherwise do (bench/README.md). bin/erp.js runs
// the bundle while it is newer than every package's last `tsc -b`, else dist/main.js. Run by
// `npm run build`.
import { build } from "esbuild"
import { asciiOnly } from "./ascii-only.mjs"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const outdir = path.join(cliDir, "dist/bundle")

/**
 * Modules that find files beside themselves (catalog snapshots, the built store template, a
 * package's data file through createRequire) keep doing so: `import.meta.url` in a bundled
 * module becomes the URL of the file it came from, found from the bundle's folder.
 */
const MODULE_URL = "__erpModuleUrl"
const keepModuleUrls = {
  name: "keep-module-urls",
  setup(build) {
    build.onLoad({ filter: /\.m?js$/ }, async (args) => {
      const contents = await fs.promises.readFile(args.path, "utf8")
      if (!contents.includes("import.meta.url")) return undefined
      const relative = JSON.stringify(path.relative(outdir, args.path).split(path.sep).join("/"))
      return { contents: contents.replaceAll("import.meta.url", `${MODULE_URL}(${relative})`), loader: "js" }
    })
  }
}

const partial = `${outdir}.partial-${process.pid}`
fs.rmSync(partial, { recursive: true, force: true })
await build({
  entryPoints: { main: path.join(cliDir, "dist/main.js") },
  outdir: partial,
  outExtension: { ".js": ".cjs" },
  bundle: true,
  // CommonJS, so that bin/erp.js runs the bundle as one script with V8's code cache; a dynamic
  // import() of ours becomes a function run on first use, so a command still runs only the code it needs.
  format: "cjs",
  platform: "node",
  target: "node22",
  // PGlite loads its WebAssembly and data files from beside its own modules; pg-native is optional.
  external: ["@electric-sql/pglite", "@electric-sql/pglite/*", "pg-native"],
  plugins: [keepModuleUrls],
  // Defined once at the top, where `require` is the bundle's own (a module may name a local
  // `require`); after "use strict", which must stay first for the bundle to run strict, as ES modules do.
  banner: { js: `"use strict";\nconst ${MODULE_URL} = (file) => require("node:url").pathToFileURL(require("node:path").join(__dirname, file)).href;` },
  legalComments: "none",
  logLevel: "warning"
})
const bundled = path.join(partial, "main.cjs")
const text = await fs.promises.readFile(bundled, "utf8")
const ascii = await asciiOnly(text)
if (ascii !== text) await fs.promises.writeFile(bundled, ascii)
else if (!/^[\x00-\x7f]*$/.test(text)) console.warn("bundle: characters past ASCII outside comments; bin/erp.js reads it as UTF-8, slower")

fs.rmSync(outdir, { recursive: true, force: true })
fs.renameSync(partial, outdir)
