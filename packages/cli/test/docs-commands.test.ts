import type { Command, Option } from "commander"
import { describe, expect, it } from "vitest"
import { codeOf, USER_TEXTS } from "../../../test/support/docs-code.js"
import { makeProgram } from "../src/main.js"

/** `erp …` command lines in code: each up to a comment, a pipe or the end of the line (`erp = …` is a variable of an example). */
const commandLines = (code: ReadonlyArray<string>): ReadonlyArray<string> =>
  code.flatMap((line) => [...line.matchAll(/(?:^|[\s$(]|\.\/)erp ([^\s|#;&)=][^|#;&)`]*)/g)].map((match) => match[1].trim()))

const optionOf = (command: Command, flag: string): Option | undefined =>
  command.options.find((option) => option.long === flag || option.short === flag || option.long === flag.replace(/^--no-/, "--"))

/** What is wrong with one command line, walking the program's commands and options as commander would. */
const problemOf = (program: Command, line: string): string | undefined => {
  const words = line.split(/\s+/)
  let command = program
  let arguments_ = 0
  for (let index = 0; index < words.length; index++) {
    const word = words[index].replace(/[.,:]+$/, "")
    if (word === "…" || word === "..." || word.startsWith("<") || word.startsWith("[") || word.startsWith("--<")) continue
    if (word.startsWith("-")) {
      const [flag] = word.split("=")
      if (flag === "--help" || flag === "-h" || flag === "--version" || flag === "-V") continue
      const option = optionOf(command, flag) ?? optionOf(program, flag)
      if (!option) return `"${flag}" is not an option of "erp ${command === program ? "" : command.name()}"`
      if ((option.required || option.optional) && !word.includes("=")) index++
      continue
    }
    const sub = arguments_ === 0 ? command.commands.find((candidate) => candidate.name() === word || candidate.aliases().includes(word)) : undefined
    if (sub) command = sub
    else if (command === program) return `"${word}" is not a command`
    else arguments_++
  }
  return undefined
}

describe("commands named in the docs", () => {
  it("name commands and options erp has, in every text a user reads", () => {
    const program = makeProgram()
    const problems: Array<string> = []
    let checked = 0
    for (const file of USER_TEXTS) {
      for (const line of commandLines(codeOf(file))) {
        checked++
        const problem = problemOf(program, line)
        if (problem) problems.push(`${file}: erp ${line} -> ${problem}`)
      }
    }
    expect(checked).toBeGreaterThan(30)
    expect(problems).toEqual([])
  })

  it("finds a wrong option and a wrong command (the check itself)", () => {
    const program = makeProgram()
    expect(problemOf(program, "keys create --tenant T --name N --grant products:read")).toContain("--grant")
    expect(problemOf(program, "keys create --tenant T --name N --permission products:read")).toBeUndefined()
    expect(problemOf(program, "key create")).toContain("not a command")
  })
})
