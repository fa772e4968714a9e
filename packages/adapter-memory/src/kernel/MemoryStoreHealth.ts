/** The memory store is the process itself: while the process answers, so does the store. */
import { Kernel } from "@feedback/core"
import { Effect, Layer } from "effect"

export const MemoryStoreHealth = Layer.succeed(
  Kernel.StoreHealth,
  Kernel.StoreHealth.of({ check: Effect.void, poolUsage: Effect.undefined })
)
