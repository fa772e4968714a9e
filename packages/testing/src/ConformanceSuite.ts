/**
 * The shape of a capability's conformance suite, apart from the list that runs them all (`StoreConformance.ts`), so
 * each suite imports it without importing that list back.
 */
import type { Kernel, StoreServices, Webhooks } from "@feedback/core"
import type { Layer } from "effect"
import type { StoreTestKit } from "./StoreTestKit.ts"

/** The test-only service every store implements for the suites (never part of a production layer). */
export type TestSupport = StoreTestKit

/**
 * What a suite gets: the store under test, with ids and the suites' fixed DNS (`ConformanceDns`), as a layer shared
 * by the suite's tests; `CoreLayer.pipe(Layer.provideMerge(store))` gives it every use-case service over it.
 */
export type ConformanceSuite = (
  store: Layer.Layer<StoreServices | TestSupport | Kernel.IdGenerator | Webhooks.HostResolver>
) => void
