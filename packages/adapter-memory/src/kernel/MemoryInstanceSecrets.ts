/** Instance secrets in memory: one set per store instance (so one generated cursor key per `MemoryStoreLayer`). */
import { Kernel } from "@feedback/core"
import { Effect, Layer } from "effect"
import { MemoryDatabase } from "./MemoryDatabase.ts"

export const MemoryInstanceSecretRepository = Layer.effect(
  Kernel.InstanceSecretRepository,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const secrets = db.table<string, string>("instance_secrets")
    return Kernel.InstanceSecretRepository.of({
      // One synchronous mutation reads and writes under the write lock: the first candidate stored wins.
      getOrCreate: Effect.fn("InstanceSecretRepository.getOrCreate")(function*(name: string, candidate: string) {
        return yield* db.mutate(() => {
          const stored = secrets.get(name)
          if (stored !== undefined) return stored
          secrets.set(name, candidate)
          return candidate
        })
      })
    })
  })
)
