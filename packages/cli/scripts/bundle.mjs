#!/usr/bin/env node
// Bundles the built CLI (dist/main.js and everything it imports) into dist/bundle/, one chunk
// per lazily loaded part, so that a command starts without resolving and compiling the
// thousand-odd module files of effect, @effect/* and our packages (`erp --version` and every
// command that does not scan data: about half the start-up). bin/erp.js runs the bundle while
// it is newer than every package's last `tsc -b`, else dist/main.js. Run by `npm run build`.
import { build } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const cliDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const outdir = path.join(cliDir, "dist/bundle")

/**
 * Modules that find files beside themselves (catalog snapshots, the built store template, a
 * package's data file through createRequire) keep doing so: `import.meta.url` in a bundled
 * module becomes the URL of the file it came from, relative to the bundle's folder.
 */
const keepModuleUrls = {
  name: "keep-module-urls",
  setup(build) {
    build.onLoad({ filter: /\.m?js$/ }, async (args) => {
      const contents = await fs.promises.readFile(args.path, "utf8")
      if (!contents.includes("import.meta.url")) return undefined
      const relative = path.relative(outdir, args.path).split(path.sep).join("/")
      return { contents: contents.replaceAll("import.meta.url", `new URL(${JSON.stringify(relative)}, import.meta.url).href`), loader: "js" }
    })
  }
}

const partial = `${outdir}.partial-${process.pid}`
fs.rmSync(partial, { recursive: true, force: true })
await build({
  entryPoints: { main: path.join(cliDir, "dist/main.js"), version: path.join(cliDir, "dist/version.js") },
  outdir: partial,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  // PGlite loads its WebAssembly and data files from beside its own modules; pg-native is optional.
  external: ["@electric-sql/pglite", "@electric-sql/pglite/*", "pg-native"],
  // Bundled CommonJS packages (commander, pg) call require.
  banner: { js: "import { createRequire as __erpCreateRequire } from \"node:module\"; const require = __erpCreateRequire(import.meta.url);" },
  plugins: [keepModuleUrls],
  legalComments: "none",
  logLevel: "warning"
})
fs.rmSync(outdir, { recursive: true, force: true })
fs.renameSync(partial, outdir)
