#!/usr/bin/env node
// Writes the release tarballs of every published package (packages/*, those not marked private)
// to one folder: `npm run pack` (which builds first) writes them to release/; `node scripts/pack.mjs
// <folder>` packs the build already made. Before packing, each package's built modules are checked
// to import only packages it declares (dependencies or peer dependencies); after, each tarball is
// checked to hold what the package needs at run time and nothing made only for this repository:
// no tests, no TypeScript sources, no build info, no code cache written on this machine.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { builtinModules } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const out = path.resolve(process.argv[2] ?? path.join(root, "release"))
const problems = []

/** `node scripts/pack.mjs <folder> core http`: only those folders of packages/. */
const only = process.argv.slice(3)
const packages = fs.readdirSync(path.join(root, "packages"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, "packages", entry.name, "package.json")))
  .filter((entry) => only.length === 0 || only.includes(entry.name))
  .map((entry) => {
    const dir = path.join(root, "packages", entry.name)
    return { dir, manifest: JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")) }
  })
  .filter(({ manifest }) => manifest.private !== true)

/** Bare module names a file imports (static, dynamic, re-exports, `import("x").T` in declarations, require). */
const importsOf = (text) => {
  const specifiers = [
    ...text.matchAll(/(?:^|[;}])\s*(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']/gm),
    ...text.matchAll(/(?:^|[;}])\s*import\s*["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g),
    ...text.matchAll(/\brequire\s*\(\s*["']([^"']+)["']\s*\)/g)
  ].map((match) => match[1])
  return specifiers
    .filter((specifier) => !specifier.startsWith(".") && !specifier.startsWith("/") && !specifier.startsWith("node:") && !specifier.startsWith("#"))
    .map((specifier) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/"))
    .filter((name) => !builtinModules.includes(name))
}

const filesUnder = (dir) =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { withFileTypes: true, recursive: true }).filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name))
    : []

for (const { dir, manifest } of packages) {
  const name = manifest.name
  for (const target of [...Object.values(manifest.exports ?? {}).flatMap((entry) => Object.values(entry)), ...Object.values(manifest.bin ?? {})]) {
    if (!fs.existsSync(path.join(dir, target))) problems.push(`${name}: ${target} is missing: run npm run build first`)
  }
  // A module whose source is gone (tsc -b leaves the outputs of deleted sources behind) is not shipped.
  for (const file of filesUnder(path.join(dir, "dist")).filter((file) => file.endsWith(".js") && !file.includes(`${path.sep}bundle${path.sep}`))) {
    const source = path.join(dir, "src", path.relative(path.join(dir, "dist"), file)).replace(/\.js$/, ".ts")
    if (!fs.existsSync(source)) problems.push(`${name}: ${path.relative(dir, file)} has no source (${path.relative(dir, source)}): remove ${path.relative(root, path.join(dir, "dist"))} and build again`)
  }
  const declared = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {}), name])
  const modules = [...filesUnder(path.join(dir, "dist")).filter((file) => !file.includes(`${path.sep}bundle${path.sep}`)), ...filesUnder(path.join(dir, "bin")), ...filesUnder(path.join(dir, "src"))]
    .filter((file) => /\.(m?js|d\.ts)$/.test(file) && !(file.includes(`${path.sep}src${path.sep}`) && !file.endsWith(".mjs")))
  const undeclared = new Map()
  for (const file of modules) {
    for (const imported of importsOf(fs.readFileSync(file, "utf8"))) {
      if (!declared.has(imported) && !undeclared.has(imported)) undeclared.set(imported, path.relative(dir, file))
    }
  }
  for (const [imported, file] of undeclared) problems.push(`${name}: ${file} imports ${imported}, which is not among its dependencies or peer dependencies`)
}
if (problems.length > 0) {
  console.error(`pack: nothing packed\n${problems.map((problem) => `  ${problem}`).join("\n")}`)
  process.exit(1)
}

fs.mkdirSync(out, { recursive: true })
for (const file of fs.readdirSync(out)) if (file.endsWith(".tgz")) fs.rmSync(path.join(out, file))

/** What each package reads from its own folder at run time, beyond its exports and bin. */
const NEEDED = {
  "@erp/core": ["store-template/manifest.json", "store-template/pgdata.tar.br", "src/store/pglite-worker.mjs", "src/catalogs/data/countries.json"],
  "@erp/http": ["assets/scalar/standalone.js", "assets/scalar/NOTICE.md"],
  "@erp/cli": ["dist/bundle/main.cjs"]
}
const FORBIDDEN = [
  [/(^|\/)test\//, "a test folder"],
  [/(?<!\.d)\.tsx?$/, "a TypeScript source"],
  [/\.tsbuildinfo$/, "build info"],
  [/\.v8-cache/, "a V8 code cache made on this machine"],
  [/\.partial-\d+/, "a partial file of a build"]
]

const rows = []
for (const { dir, manifest } of packages) {
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }))
  const files = new Set(packed.files.map((file) => file.path))
  const needed = [
    "package.json", "README.md", "LICENSE",
    ...Object.values(manifest.exports ?? {}).flatMap((entry) => Object.values(entry)).map((target) => target.replace(/^\.\//, "")),
    ...Object.values(manifest.bin ?? {}).map((target) => target.replace(/^\.\//, "")),
    ...(NEEDED[manifest.name] ?? [])
  ]
  for (const file of needed) if (!files.has(file)) problems.push(`${packed.filename}: ${file} is missing`)
  for (const file of files) {
    for (const [pattern, what] of FORBIDDEN) if (pattern.test(file)) problems.push(`${packed.filename}: ${file} is ${what}`)
  }
  rows.push([packed.filename, packed.size, packed.unpackedSize, packed.entryCount])
}

const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
for (const [file, size, unpacked, count] of rows) console.log(`${file.padEnd(28)} ${mib(size).padStart(10)} packed ${mib(unpacked).padStart(10)} unpacked ${String(count).padStart(6)} files`)
console.log(`in ${out}`)
if (problems.length > 0) {
  console.error(`pack: the tarballs are not fit to publish\n${problems.map((problem) => `  ${problem}`).join("\n")}`)
  process.exit(1)
}
