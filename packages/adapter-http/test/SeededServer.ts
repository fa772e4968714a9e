/**
 * A test server whose store a test can also reach directly, to seed reviews through the test-support `ReviewSeed`
 * (the API has no endpoint that writes reviews on this branch). Runs on memory, and on a PostgreSQL server too
 * when TEST_DATABASE_URL is set.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { MemoryReviewSeed } from "@feedback/adapter-memory/testing"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { PgReviewSeed } from "@feedback/adapter-postgres/testing"
import { IdGenerator, type OrganizationId, type StoreServices } from "@feedback/core"
import { makeSeedReview, ReviewSeed, type SeedReview, type SeedReviewOptions } from "@feedback/core/testing"
import { Effect, Layer, ManagedRuntime } from "effect"
import { freshLayer, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"

export interface SeededServer extends TestServer {
  readonly seed: (organizationId: string, reviews: ReadonlyArray<SeedReviewOptions>) => Promise<ReadonlyArray<SeedReview>>
}

type Store = Layer.Layer<StoreServices | ReviewSeed, unknown>

export const testStores: ReadonlyArray<readonly [string, () => Store]> = [
  ["memory", () => MemoryReviewSeed.pipe(Layer.provideMerge(MemoryStoreLayer))],
  ...(serverUrl === undefined
    ? []
    : [["postgres server", () => freshLayer((t) => PgReviewSeed.pipe(Layer.provideMerge(PgStoreLayer(t))))] as const])
]

export const makeSeededServer = (makeStore: () => Store): SeededServer => {
  const store = makeStore()
  const memoMap = Layer.makeMemoMapUnsafe()
  const runtime = ManagedRuntime.make(Layer.merge(store, IdGenerator.uuidV7), { memoMap })
  const server = makeTestServer(store, {}, memoMap)
  return {
    ...server,
    seed: (organizationId, reviews) =>
      runtime.runPromise(Effect.gen(function*() {
        const seeds: Array<SeedReview> = []
        for (const options of reviews) seeds.push(yield* makeSeedReview(organizationId as OrganizationId, options))
        yield* ReviewSeed.use((s) => s.insert(seeds))
        return seeds
      })),
    dispose: async () => {
      await server.dispose()
      await runtime.dispose()
    }
  }
}
