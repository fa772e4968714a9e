/**
 * An embedded web handler's requests record no spans unless their caller gives a context (ApiServer.ts
 * `untracedRequests`, docs/DECISIONS.md §37): nothing in the handler's own context could export them. A caller that
 * passes a tracer with a request still gets the request's spans, and the answer is the same either way.
 */
import { Kernel } from "@feedback/core"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Context, Layer, Redacted, Tracer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { makeWebHandler } from "../src/server/ApiServer.ts"
import { allPermissions, OPERATOR_TOKEN, requestVia } from "./Http.ts"

const { handler, dispose } = makeWebHandler(Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7), {
  operatorToken: Redacted.make(OPERATOR_TOKEN),
  workers: false
})
afterAll(() => dispose())

const call = async (method: string, path: string, token: string, body?: unknown, context?: Context.Context<never>) => {
  const res = await requestVia(handler, "http://embedded", context)(method, path, { token, body })
  return { status: res.status, text: res.text }
}

describe("an embedded web handler's spans", () => {
  it("go to the tracer a caller passes with a request, and the answer is the same without one", async () => {
    const org = JSON.parse((await call("POST", "/operator/organizations", OPERATOR_TOKEN, { name: "Traced" })).text)
    const key = JSON.parse(
      (await call("POST", `/operator/organizations/${org.id}/keys`, OPERATOR_TOKEN, { permissions: allPermissions }))
        .text
    )
    const names: Array<string> = []
    const recording = Tracer.make({
      span(options) {
        names.push(options.name)
        return Tracer.nativeTracer.span(options)
      }
    })
    const traced = await call(
      "GET",
      "/reviews?limit=5",
      key.secretKey,
      undefined,
      Context.make(Tracer.Tracer, recording) as Context.Context<never>
    )
    const untraced = await call("GET", "/reviews?limit=5", key.secretKey)
    expect(traced.status).toBe(200)
    expect(untraced).toEqual(traced)
    expect(names).toContain("GET /reviews")
    expect(names).toContain("Reviews.list")
  })
})
