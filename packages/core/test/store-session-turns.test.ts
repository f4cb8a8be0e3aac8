import { describe, expect, it } from "vitest"
import { makeSessionTurns } from "../src/store/session-turns.js"

/** The embedded store's one session, handed to owners in rotation. */
describe("session turns", () => {
  /** Work that records its name and keeps the session until its `end` is called. */
  const recorder = () => {
    const seen: Array<string> = []
    const ends = new Map<string, () => void>()
    const work = (name: string) => (release: () => void) => {
      seen.push(name)
      ends.set(name, release)
    }
    const end = (name: string) => ends.get(name)!()
    return { seen, work, end }
  }

  it("hands the session to the owners with waiting work in rotation, not by arrival", () => {
    const turns = makeSessionTurns()
    const { seen, work, end } = recorder()
    turns.enter("host", work("host"))
    for (const name of ["a1", "a2", "a3", "a4"]) turns.enter("a", work(name))
    turns.enter("b", work("b1"))
    turns.enter("b", work("b2"))
    turns.enter("c", work("c1"))
    end("host")
    end("a1")
    // Arrives while b1 runs: behind the owners already in the rotation (b among them, for b2).
    turns.enter("d", work("d1"))
    for (const name of ["b1", "c1", "a2", "b2", "d1", "a3"]) end(name)
    // Back after its queue ran dry: at the back of the rotation.
    turns.enter("c", work("c2"))
    end("a4")
    end("c2")
    expect(seen).toEqual(["host", "a1", "b1", "c1", "a2", "b2", "d1", "a3", "a4", "c2"])
  })

  it("puts an owner whose turn ends behind the others, even with work it queued before they came", () => {
    const turns = makeSessionTurns()
    const { seen, work, end } = recorder()
    turns.enter("a", work("a1"))
    turns.enter("a", work("a2"))
    turns.enter("a", work("a3"))
    turns.enter("b", work("b1"))
    end("a1")
    end("b1")
    end("a2")
    expect(seen).toEqual(["a1", "b1", "a2", "a3"])
  })

  it("lets work leave before its turn, ends a turn once however often its end is called, and is free again when no one waits", async () => {
    const turns = makeSessionTurns()
    const { seen, work, end } = recorder()
    turns.enter("a", work("a1"))
    const leave = turns.enter("b", work("b1"))
    turns.enter("b", work("b2"))
    const leaveC = turns.enter("c", work("c1"))
    leave()
    leaveC()
    end("a1")
    end("a1")
    expect(seen).toEqual(["a1", "b2"])
    // A leave after the turn came does nothing: the work ends its turn itself.
    leave()
    end("b2")
    const release = await turns.take("e")
    expect(seen).toEqual(["a1", "b2"])
    turns.enter("f", work("f1"))
    expect(seen).toEqual(["a1", "b2"])
    release()
    expect(seen).toEqual(["a1", "b2", "f1"])
    end("f1")
    turns.enter("g", work("g1"))
    expect(seen).toEqual(["a1", "b2", "f1", "g1"])
  })
})
