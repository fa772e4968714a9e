/**
 * Optional peers (docs/DECISIONS.md §66): loaded on first use; a missing one is a defect naming the package, the
 * feature and the install, any other failure stays what it was; the stores chosen by configuration load this way.
 */
import { Organizations } from "@feedback/core"
import { Cause, Effect, Exit, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { isMissingPackage, MissingPackage, optionalPackage } from "../src/server/OptionalPackage.ts"
import { chooseStore, storeLayer } from "../src/server/StoreSelection.ts"

// A variable specifier: the type checker must not look the module up.
const absent = "@feedback/no-such-package"
const defectOf = <A>(effect: Effect.Effect<A>) =>
  Effect.runPromiseExit(effect).then((exit) => {
    if (!Exit.isFailure(exit)) throw new Error("expected a defect")
    return Cause.squash(exit.cause)
  })

describe("optionalPackage", () => {
  it("answers the module of an installed package", async () => {
    const module = await Effect.runPromise(optionalPackage("csv-parse", "CSV", () => import("csv-parse")))
    expect(typeof module.parse).toBe("function")
  })

  it("dies with a MissingPackage naming the package, the feature and the install when it is absent", async () => {
    const defect = await defectOf(optionalPackage(absent, "The frobnicator", () => import(absent)))
    expect(defect).toBeInstanceOf(MissingPackage)
    expect((defect as MissingPackage).packageName).toBe(absent)
    expect((defect as Error).message).toBe(
      `The frobnicator needs the package ${absent}, which this host has not installed: npm install ${absent}`
    )
  })

  it("keeps any other failure as it is: a module missing inside an installed package, or a module that throws", async () => {
    const inner = Object.assign(new Error("Cannot find package 'left-pad' imported from /x/y.js"), {
      code: "ERR_MODULE_NOT_FOUND"
    })
    expect(await defectOf(optionalPackage("csv-parse", "CSV", () => Promise.reject(inner)))).toBe(inner)
    const broken = new Error("boom")
    expect(await defectOf(optionalPackage("csv-parse", "CSV", () => Promise.reject(broken)))).toBe(broken)
  })

  it("recognises Node's answers for an absent package, by its name only", async () => {
    const error = await import(absent).catch((e: unknown) => e)
    expect(isMissingPackage(error, absent)).toBe(true)
    expect(isMissingPackage(error, "@feedback/no-such")).toBe(false)
    expect(isMissingPackage(new Error(`'${absent}'`), absent)).toBe(false)
  })
})

describe("storeLayer", () => {
  it("loads the store it is told to use, here the memory store, when built", async () => {
    const name = await Effect.runPromise(
      Effect.gen(function*() {
        const organizations = yield* Organizations.Organizations
        return (yield* organizations.createOrganization({ name: "Loaded lazily" })).name
      }).pipe(
        Effect.provide(
          Organizations.Organizations.layer.pipe(Layer.provide(storeLayer(chooseStore("memory", "unused"))))
        )
      )
    )
    expect(name).toBe("Loaded lazily")
  })
})
