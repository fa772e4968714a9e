/**
 * A real Node server whose refusal gate tests can watch: the node handler of a store, its request log kept, its gate
 * wrapped so a test counts what the gate answered itself, and raw requests with exactly the headers given.
 */
import { Kernel, type StoreServices } from "@feedback/core"
import { Layer, Redacted } from "effect"
import { createServer, type IncomingHttpHeaders, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { expect } from "vitest"
import { makeNodeHandler } from "../src/server/NodeHandler.ts"
import type { RefusalGate, RefusalGateSlot } from "../src/server/RefusalGate.ts"
import { OPERATOR_TOKEN } from "./Http.ts"

export interface RawAnswer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface GatedServer {
  /** One request over a fresh connection, with exactly the headers given (plus Host). */
  readonly send: (method: string, path: string, headers?: Record<string, string>, body?: string) => Promise<RawAnswer>
  /** The request log's lines, as the server wrote them. */
  readonly lines: ReadonlyArray<string>
  readonly close: () => Promise<void>
}

/** Starts the store's node handler on loopback, its gate replaced by `watch(gate)`. */
export const startGatedServer = async (
  store: Layer.Layer<StoreServices, unknown>,
  watch: (gate: RefusalGate) => RefusalGate
): Promise<GatedServer> => {
  const lines: Array<string> = []
  const slot: RefusalGateSlot = { current: undefined }
  const api = await makeNodeHandler(Layer.merge(store, Kernel.IdGenerator.uuidV7), {
    workers: false,
    operatorToken: Redacted.make(OPERATOR_TOKEN),
    logRequests: true,
    log: (line) => lines.push(line),
    refusalGate: slot
  })
  expect(slot.current).toBeDefined()
  slot.current = watch(slot.current!)
  const server = createServer(api.handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const send = (method: string, path: string, headers: Record<string, string> = {}, body?: string) =>
    new Promise<RawAnswer>((resolve, reject) => {
      const req = httpRequest({ host: "127.0.0.1", port, method, path, headers, agent: false }, (res) => {
        let text = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (text += chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
      })
      req.on("error", reject)
      req.end(body)
    })
  const close = async () => {
    await new Promise((resolve) => server.close(resolve))
    await api.dispose()
  }
  return { send, lines, close }
}
