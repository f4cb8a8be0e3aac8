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
 * Modules that find files beside themselves (catalog snapshots, the built store template, the
 * PGlite worker, the API reference's asset) keep doing so: `import.meta.url` in a bundled module
 * becomes the URL of the file it came from. A file of another of our packages is found in that
 * package's folder, wherever the install put it (beside this one, or in its own node_modules when
 * installed globally): `__erpModuleUrl(path in the package, package name)`, resolved as `require`
 * would find the package from the bundle. Any other file is found from the bundle's folder.
 */
const MODULE_URL = "__erpModuleUrl"
const packageOf = (file) => {
  for (let dir = path.dirname(file); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const manifest = path.join(dir, "package.json")
    if (fs.existsSync(manifest)) {
      const { name } = JSON.parse(fs.readFileSync(manifest, "utf8"))
      if (name) return { dir, name }
    }
  }
  return undefined
}
const keepModuleUrls = {
  name: "keep-module-urls",
  setup(build) {
    build.onLoad({ filter: /\.m?js$/ }, async (args) => {
      const contents = await fs.promises.readFile(args.path, "utf8")
      if (!contents.includes("import.meta.url")) return undefined
      const owner = packageOf(fs.realpathSync(args.path))
      const ours = owner !== undefined && owner.name.startsWith("@erp/") && owner.dir !== cliDir
      const where = ours
        ? [path.relative(owner.dir, fs.realpathSync(args.path)), owner.name]
        : [path.relative(outdir, args.path)]
      const call = `${MODULE_URL}(${where.map((part) => JSON.stringify(part.split(path.sep).join("/"))).join(", ")})`
      return { contents: contents.replaceAll("import.meta.url", call), loader: "js" }
    })
  }
}

/** Where `require` finds a package from the bundle's folder (a package's own exports may not include its package.json). */
const PACKAGE_DIR = `(name) => { const fs = require("node:fs"), path = require("node:path"); for (const dir of require.resolve.paths(name) ?? []) { const found = path.join(dir, name); if (fs.existsSync(path.join(found, "package.json"))) return fs.realpathSync(found); } throw new Error("erp: cannot find the package " + name + " from " + __dirname); }`

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
  banner: {
    js: `"use strict";\nconst ${MODULE_URL} = (file, owner) => require("node:url").pathToFileURL(require("node:path").join(owner === undefined ? __dirname : (${PACKAGE_DIR})(owner), file)).href;`
  },
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
