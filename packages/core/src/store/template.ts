import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import * as zlib from "node:zlib"

/**
 * A new embedded store starts as a copy of this folder instead of running initdb, the
 * migrations and the catalog load, which take many times longer than a copy (bench/README.md).
 * `npm run build` makes it (scripts/build-store-template.mjs): a `pgdata` folder
 * migrated and seeded with the catalogs, nothing else — no tenant, no key, no secret, which
 * every store makes for itself on its first start. Not committed: it is built output. The build
 * keeps it as one archive, `pgdata.tar.br` (a tar file, Brotli-compressed): an eighth of the
 * folder's 45 MB in every install of the package, and unpacked as fast as the folder is copied.
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

const ARCHIVE = "pgdata.tar.br"

/** The template's `pgdata`, as a folder or as the archive the build makes; none when missing or made by another PGlite. */
const usableTemplate = (templateDir: string): { readonly folder: string } | { readonly archive: string } | undefined => {
  try {
    const manifest = JSON.parse(fs.readFileSync(path.join(templateDir, MANIFEST), "utf8")) as StoreTemplateManifest
    if (manifest.pglite !== pgliteVersion()) return undefined
    const archive = path.join(templateDir, ARCHIVE)
    if (fs.existsSync(archive)) return { archive }
    const folder = path.join(templateDir, "pgdata")
    return fs.existsSync(path.join(folder, "PG_VERSION")) ? { folder } : undefined
  } catch {
    return undefined
  }
}

/** One ustar header: a regular file (`0`) or a folder (`5`); names are short relative paths, mode in octal. */
const tarHeader = (name: string, size: number, mode: number, type: "0" | "5"): Buffer => {
  const header = Buffer.alloc(512)
  if (Buffer.byteLength(name) > 100) throw new Error(`store template: the name ${name} is too long for the archive`)
  header.write(name, 0, 100, "utf8")
  header.write(`${(mode & 0o7777).toString(8).padStart(7, "0")}\0`, 100)
  header.write("0000000\0", 108)
  header.write("0000000\0", 116)
  header.write(`${size.toString(8).padStart(11, "0")}\0`, 124)
  header.write("00000000000\0", 136)
  header.write(type, 156)
  header.write("ustar\u000000", 257)
  header.write("        ", 148)
  header.write(`${header.reduce((sum, byte) => sum + byte, 0).toString(8).padStart(6, "0")}\0 `, 148)
  return header
}

/**
 * Turns the template's `pgdata` folder into the archive a new store is unpacked from (the build
 * runs it after making the folder), and removes the folder.
 */
export const archiveStoreTemplate = (templateDir: string): void => {
  const folder = path.join(templateDir, "pgdata")
  const parts: Array<Buffer> = []
  const visit = (dir: string, relative: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const name = relative === "" ? entry.name : `${relative}/${entry.name}`
      const file = path.join(dir, entry.name)
      const { mode } = fs.statSync(file)
      if (entry.isDirectory()) {
        parts.push(tarHeader(`${name}/`, 0, mode, "5"))
        visit(file, name)
      } else {
        const data = fs.readFileSync(file)
        parts.push(tarHeader(name, data.length, mode, "0"), data, Buffer.alloc((512 - (data.length % 512)) % 512))
      }
    }
  }
  visit(folder, "")
  parts.push(Buffer.alloc(1024))
  const tar = Buffer.concat(parts)
  const archive = zlib.brotliCompressSync(tar, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: tar.length } })
  const partial = path.join(templateDir, `${ARCHIVE}.partial-${process.pid}`)
  fs.writeFileSync(partial, archive)
  fs.renameSync(partial, path.join(templateDir, ARCHIVE))
  fs.rmSync(folder, { recursive: true, force: true })
}

/** Writes the archive's folders under `to`, then its files, all started at once. */
const unpackArchive = async (archive: string, to: string): Promise<void> => {
  const tar = await promisify(zlib.brotliDecompress)(await fs.promises.readFile(archive))
  const field = (header: Buffer, start: number, length: number) => header.toString("utf8", start, start + length).replace(/\0[\s\S]*$/, "").trim()
  const folders: Array<{ readonly target: string; readonly mode: number }> = [{ target: to, mode: 0o755 }]
  const files: Array<{ readonly target: string; readonly mode: number; readonly data: Buffer }> = []
  for (let offset = 0; offset + 512 <= tar.length && tar[offset] !== 0;) {
    const header = tar.subarray(offset, offset + 512)
    const name = field(header, 0, 100)
    const mode = parseInt(field(header, 100, 8), 8)
    const size = parseInt(field(header, 124, 12) || "0", 8)
    if (name.split("/").includes("..") || path.isAbsolute(name)) throw new Error(`store template: the archive names ${name}, outside its folder`)
    offset += 512
    if (String.fromCharCode(header[156]) === "5") folders.push({ target: path.join(to, name), mode })
    else files.push({ target: path.join(to, name), mode, data: tar.subarray(offset, offset + size) })
    offset += Math.ceil(size / 512) * 512
  }
  // A folder comes before what it holds.
  for (const { target, mode } of folders) await fs.promises.mkdir(target, { recursive: true, mode })
  await Promise.all(files.map(({ target, mode, data }) => fs.promises.writeFile(target, data, { mode })))
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
  if ("archive" in source) await unpackArchive(source.archive, partial)
  else await copyTree(source.folder, partial)
  await fs.promises.rm(pgdata, { recursive: true, force: true })
  await fs.promises.rename(partial, pgdata)
  return true
}
