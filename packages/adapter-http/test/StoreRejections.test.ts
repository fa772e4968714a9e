/**
 * A value the store refuses after validation (a `StoreRejection`, see adapter-postgres/src/kernel/SqlErrors.ts) is answered
 * as the 400/409 it carries, in the error envelope, on any route, even one that declares neither; every other
 * defect is still a 500. The store is memory with one repository method replaced to reject.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Kernel, Organizations } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeTestServer } from "./TestServer.ts"

let outcome: "real" | "invalid" | "conflict" | "defect" | "unencodable" = "real"

/** The memory store whose `findById` (used by GET /organization) fails as a rejecting database would. */
const RejectingStore = Layer.effect(
  Organizations.OrganizationRepository,
  Effect.gen(function*() {
    const real = yield* Organizations.OrganizationRepository
    return Organizations.OrganizationRepository.of({
      ...real,
      findById: (id) =>
        outcome === "real"
          ? real.findById(id)
          : outcome === "invalid"
          ? Effect.die(
            new Kernel.StoreRejection({
              error: Kernel.InvalidRequest.single("", "The request contains text that cannot be stored.")
            })
          )
          : outcome === "conflict"
          ? Effect.die(
            new Kernel.StoreRejection({
              error: new Kernel.Conflict({ message: "The request conflicts with an existing record." })
            })
          )
          : outcome === "unencodable"
          ? real.findById(id).pipe(
            Effect.map(Option.map((org) => ({ ...org, createdAt: "not a timestamp" }) as typeof org))
          )
          : real.findById(id).pipe(Effect.andThen(Effect.die(new Error("boom"))))
    })
  })
).pipe(Layer.provideMerge(MemoryStoreLayer))

const server = makeTestServer(RejectingStore)
afterAll(() => server.dispose())

describe("store rejections over HTTP", () => {
  it("are answered with their 400 or 409 in the envelope; other defects stay 500", async () => {
    const { key } = await server.provision()
    outcome = "invalid"
    const invalid = await server.request("GET", "/organization", { token: key })
    expect(invalid.status).toBe(400)
    expect(invalid.body).toEqual({
      error: {
        code: "INVALID_REQUEST",
        message: "The request contains text that cannot be stored.",
        details: { issues: [{ path: "", message: "The request contains text that cannot be stored." }] }
      }
    })
    outcome = "conflict"
    const conflict = await server.request("GET", "/organization", { token: key })
    expect(conflict.status).toBe(409)
    expect(conflict.body).toEqual({
      error: { code: "CONFLICT", message: "The request conflicts with an existing record." }
    })
    outcome = "defect"
    const defect = await server.request("GET", "/organization", { token: key })
    expect(defect.status).toBe(500)
    expect(defect.body.error.code).toBe("INTERNAL")
    // A response that fails its own schema is our bug, never the client's 400.
    outcome = "unencodable"
    const unencodable = await server.request("GET", "/organization", { token: key })
    expect(unencodable.status, unencodable.text).toBe(500)
    expect(unencodable.body.error.code).toBe("INTERNAL")
  })
})
