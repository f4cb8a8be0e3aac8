import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * A new embedded store starts as a copy of this folder instead of running initdb, the
 * migrations and the catalog load, which take many times longer than a copy (bench/README.md).
 * `npm run build` makes it (scripts/build-store-template.mjs): a `pgdata` folder
 * migrated and seeded with the catalogs, nothing else — no tenant, no key, no secret, which
 * every store makes for itself on its first start. Not committed: it is built output.
 */
export const STORE_TEMPLATE_DIR = fileURLToPath(new URL("../../store-template/", import.meta.url))

const MANIFEST = "manifest.json"

/** What the template was made with; a template of another PGlite is not used. */
export interface StoreTemplateManifest {
  readonly pglite: string
}

/** The installed PGlite's version (its package.json does not export itself, so found beside its entry point). */
export const pgliteVersion = (): string => {
  let dir = path.dirname(createRequire(import.meta.url).resolve("@electric-sql/pglite"))
  for (;;) {
    const file = path.join(dir, "package.json")
    if (fs.existsSync(file)) {
      const manifest = JSON.parse(fs.readFileSync(file, "utf8")) as { name?: string; version?: string }
      if (manifest.name === "@electric-sql/pglite" && manifest.version) return manifest.version
    }
    const parent = path.dirname(dir)
    if (parent === dir) throw new Error("cannot find the version of @electric-sql/pglite")
    dir = parent
  }
}

export const writeStoreTemplateManifest = (templateDir: string) =>
  fs.writeFileSync(path.join(templateDir, MANIFEST), `${JSON.stringify({ pglite: pgliteVersion() } satisfies StoreTemplateManifest)}\n`)

const usableTemplate = (templateDir: string): string | undefined => {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(templateDir, MANIFEST), "utf8")) as StoreTemplateManifest
    const pgdata = path.join(templateDir, "pgdata")
    return manifest.pglite === pgliteVersion() && fs.existsSync(path.join(pgdata, "PG_VERSION")) ? pgdata : undefined
  } catch {
    return undefined
  }
}

/**
 * Copies a folder tree with every file's copy started at once: `fs.cp` copies the template's
 * thousand-odd files one after another, several times slower (bench/README.md).
 */
const copyTree = async (from: string, to: string): Promise<void> => {
  await fs.promises.mkdir(to, { recursive: true })
  const entries = await fs.promises.readdir(from, { withFileTypes: true })
  await Promise.all(entries.map((entry) =>
    entry.isDirectory()
      ? copyTree(path.join(from, entry.name), path.join(to, entry.name))
      : fs.promises.copyFile(path.join(from, entry.name), path.join(to, entry.name))))
}

/**
 * Fills a store's empty `pgdata` folder from the template, when there is one made by this
 * PGlite; returns whether it did. The copy goes to a temporary name renamed at the end, so an
 * interrupted copy never looks like a store (and is removed by the next). The caller holds the folder's lock, and opens and
 * migrates the store afterwards as always: a template older than the code only costs the
 * pending migrations (and a catalog reload when the snapshots changed).
 */
export const copyStoreTemplate = async (pgdata: string, templateDir: string = STORE_TEMPLATE_DIR): Promise<boolean> => {
  if (fs.existsSync(pgdata) && fs.readdirSync(pgdata).length > 0) return false
  const source = usableTemplate(templateDir)
  if (!source) return false
  // Copies that a killed process left behind: the lock the caller holds means none is under way.
  const folder = path.dirname(pgdata)
  const prefix = `${path.basename(pgdata)}.partial-`
  for (const name of await fs.promises.readdir(folder).catch(() => [])) {
    if (name.startsWith(prefix)) await fs.promises.rm(path.join(folder, name), { recursive: true, force: true })
  }
  const partial = `${pgdata}.partial-${process.pid}`
  await copyTree(source, partial)
  await fs.promises.rm(pgdata, { recursive: true, force: true })
  await fs.promises.rename(partial, pgdata)
  return true
}
