/** The memory store is the process itself: while the process answers, so does the store. */
import { StoreHealth } from "@feedback/core"
import { Effect, Layer } from "effect"

export const MemoryStoreHealth = Layer.succeed(
  StoreHealth,
  StoreHealth.of({ check: Effect.void, poolUsage: Effect.undefined })
)
