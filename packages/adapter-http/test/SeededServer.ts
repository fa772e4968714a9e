/**
 * A test server whose store a test can also reach directly, to seed reviews through the store's `StoreTestKit`
 * (the API has no endpoint that writes reviews on this branch). Runs on memory, and on a PostgreSQL server too
 * when TEST_DATABASE_URL is set.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { MemoryStoreTestKit } from "@feedback/adapter-memory/testing"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { PgStoreTestKit } from "@feedback/adapter-postgres/testing"
import { Kernel, type StoreServices } from "@feedback/core"
import { type SeedReview, type SeedReviewOptions, seedReviews, type StoreTestKit } from "@feedback/testing"
import { Effect, Layer, ManagedRuntime } from "effect"
import { freshLayer, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { makeTestServer, type TestServer, type TestServerOptions } from "./TestServer.ts"

export interface SeededServer extends TestServer {
  readonly seed: (
    organizationId: string,
    reviews: ReadonlyArray<SeedReviewOptions>
  ) => Promise<ReadonlyArray<SeedReview>>
}

type Store = Layer.Layer<StoreServices | StoreTestKit, unknown>

export const testStores: ReadonlyArray<readonly [string, () => Store]> = [
  ["memory", () => MemoryStoreTestKit.pipe(Layer.provideMerge(MemoryStoreLayer))],
  ...(serverUrl === undefined
    ? []
    : [["postgres server", () => freshLayer((t) => PgStoreTestKit.pipe(Layer.provideMerge(PgStoreLayer(t))))] as const])
]

export const makeSeededServer = (makeStore: () => Store, options: TestServerOptions = {}): SeededServer => {
  const store = makeStore()
  const memoMap = Layer.makeMemoMapUnsafe()
  const runtime = ManagedRuntime.make(Layer.merge(store, Kernel.IdGenerator.uuidV7), { memoMap })
  const server = makeTestServer(store, options, memoMap)
  return {
    ...server,
    seed: (organizationId, reviews) =>
      runtime.runPromise(seedReviews(organizationId as Kernel.OrganizationId, reviews)),
    dispose: async () => {
      await server.dispose()
      await runtime.dispose()
    }
  }
}
