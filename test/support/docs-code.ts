import * as fs from "node:fs"

/** Every text a user reads commands and routes in: the front page, the docs, and the API document's descriptions. */
export const USER_TEXTS = ["README.md", ...fs.readdirSync("docs").map((name) => `docs/${name}`), "bench/README.md", "packages/http/openapi.json"]

/** The code a text shows: fenced blocks line by line, and inline code spans (the API document's JSON strings unescaped first). */
export const codeOf = (file: string): ReadonlyArray<string> => {
  const raw = fs.readFileSync(file, "utf8")
  const text = file.endsWith(".json") ? raw.replace(/\\n/g, "\n").replace(/\\"/g, '"') : raw
  const fenced = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((match) => match[1])
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, "")
  const inline = [...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1])
  return [...fenced.flatMap((block) => block.split("\n")), ...inline]
}
