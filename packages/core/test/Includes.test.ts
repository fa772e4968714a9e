import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { attachIncludes, byKey, type IncludeLoaders } from "../src/kernel/Includes.ts"

interface Row {
  readonly id: string
  readonly ownerId: string | null
}

const make = () => {
  const calls: Array<ReadonlyArray<string>> = []
  const loaders: IncludeLoaders<Row, "owner" | "tags"> = {
    owner: byKey((r) => r.ownerId, (keys) => {
      calls.push(keys)
      return Effect.succeed(new Map(keys.map((k) => [k, { name: k.toUpperCase() }])))
    }),
    tags: byKey<Row, ReadonlyArray<string>>((r) => r.id, (keys) => Effect.succeed(new Map([[keys[0]!, ["a"]]])), [])
  }
  return { calls, loaders }
}

const run = (
  rows: ReadonlyArray<Row>,
  include: ReadonlyArray<"owner" | "tags">,
  loaders: IncludeLoaders<Row, "owner" | "tags">
) =>
  Effect.runSync(
    attachIncludes<Row, "owner" | "tags", Record<string, unknown>>(rows, include, loaders, (r) => ({ id: r.id }))
  )

describe("includes", () => {
  it("one load per include for the whole batch, with distinct keys; missing → the include's empty value", () => {
    const { calls, loaders } = make()
    const out = run([{ id: "1", ownerId: "x" }, { id: "2", ownerId: "x" }, { id: "3", ownerId: null }], [
      "owner",
      "tags",
      "owner"
    ], loaders)
    expect(calls).toEqual([["x"]])
    expect(out).toEqual([
      { id: "1", owner: { name: "X" }, tags: ["a"] },
      { id: "2", owner: { name: "X" }, tags: [] },
      { id: "3", owner: null, tags: [] }
    ])
  })

  it("an include not asked for is absent and loads nothing; nothing to look up makes no call", () => {
    const { calls, loaders } = make()
    expect(run([{ id: "1", ownerId: "x" }], [], loaders)).toEqual([{ id: "1" }])
    expect(run([{ id: "1", ownerId: null }], ["owner"], loaders)).toEqual([{ id: "1", owner: null }])
    expect(calls).toEqual([])
  })

  it("an include the store read with the records is not loaded again, and gives the same values", () => {
    const { calls, loaders } = make()
    const rows: ReadonlyArray<Row> = [{ id: "1", ownerId: "x" }, { id: "2", ownerId: "y" }, { id: "3", ownerId: null }]
    const loaded = { owner: new Map([["x", { name: "X" }], ["y", { name: "Y" }]]) }
    const attach = (preloaded?: Partial<Record<"owner" | "tags", unknown>>) =>
      Effect.runSync(
        attachIncludes<Row, "owner" | "tags", Record<string, unknown>>(
          rows,
          ["owner", "tags"],
          loaders,
          (r) => ({ id: r.id }),
          preloaded
        )
      )
    const withLoaded = attach(loaded)
    expect(calls).toEqual([])
    expect(withLoaded).toEqual(attach())
    expect(calls).toEqual([["x", "y"]])
    // Everything read already: the same answer without any load.
    expect(attach({ ...loaded, tags: new Map([["1", ["a"]]]) })).toEqual(withLoaded)
    expect(calls).toEqual([["x", "y"]])
  })
})
