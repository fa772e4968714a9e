/**
 * The cursor key every store provides: generated once and kept in the store, so it is the same on every call and
 * for every process sharing the store, and processes racing on first use agree on one key.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { Kernel } from "@feedback/core"
import type { ConformanceSuite } from "../ConformanceSuite.ts"

const payload = new TextEncoder().encode("{\"v\":2}")
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex")

export const cursorKeyConformance: ConformanceSuite = (store) =>
  layer(store, { timeout: 60_000 })("cursor key", (it) => {
    it.effect("is the secret kept in the store, the same on every call", () =>
      Effect.gen(function*() {
        const key = yield* Kernel.CursorKey
        assert.strictEqual(hex(key.tag(payload)), hex(key.tag(payload)))
        assert.strictEqual(key.tag(payload).length, 16)
        // Asking again (with another candidate) returns the stored secret, which is the key's.
        const stored = yield* Kernel.InstanceSecretRepository.use((r) =>
          r.getOrCreate(Kernel.cursorSecretName, "another candidate secret, never stored")
        )
        assert.notStrictEqual(stored, "another candidate secret, never stored")
        assert.isAtLeast(stored.length, 32)
        assert.strictEqual(hex(Kernel.CursorKey.fromSecret(stored).tag(payload)), hex(key.tag(payload)))
      }))

    it.effect("concurrent first use agrees on one secret", () =>
      Effect.gen(function*() {
        const name = `conformance-${crypto.randomUUID()}`
        const candidates = Array.from({ length: 8 }, (_, i) => `candidate-${i}-${"x".repeat(32)}`)
        const got = yield* Effect.forEach(
          candidates,
          (candidate) => Kernel.InstanceSecretRepository.use((r) => r.getOrCreate(name, candidate)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(new Set(got).size, 1)
        assert.include(candidates, got[0])
        assert.strictEqual(yield* Kernel.InstanceSecretRepository.use((r) => r.getOrCreate(name, "late")), got[0])
      }))
  })
