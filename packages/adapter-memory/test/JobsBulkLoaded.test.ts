/**
 * An import job tells the review store how many reviews it loaded once it has ended (`ReviewWriteRepository.bulkLoaded`,
 * where PostgreSQL refreshes its planner statistics): the rows it imported, once per job, never for a job of another
 * type, and nothing for a strict job that failed.
 */
import { assert, layer } from "@effect/vitest"
import { Catalog, CoreLayer, Jobs, Kernel, Organizations, Reviews } from "@feedback/core"
import { asDashboard, ConformanceDns } from "@feedback/testing"
import { Effect, Layer, Stream } from "effect"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"
import { MemoryStoreTestKit } from "../src/testing/MemoryStoreTestKit.ts"

const loads: Array<readonly [Kernel.OrganizationId, number]> = []

/** The store's repository, recording what it is told of bulk loads. */
const Recording = Layer.effect(
  Reviews.ReviewWriteRepository,
  Effect.gen(function*() {
    const store = yield* Reviews.ReviewWriteRepository
    return Reviews.ReviewWriteRepository.of({
      ...store,
      bulkLoaded: (organizationId, rows) => Effect.sync(() => void loads.push([organizationId, rows]))
    })
  })
)

const Settings = Layer.succeed(Jobs.JobSettings, {
  leaseMs: 60_000,
  batchSize: 2,
  exportRetentionMs: 3_600_000,
  maxRows: 20
})

const importJob = (
  org: Kernel.OrganizationId,
  type: "reviews" | "products",
  values: ReadonlyArray<unknown>,
  strict = false
) =>
  Jobs.Jobs.use((j) =>
    j.createImport({ type, strict, format: "ndjson" }, Stream.fromIterable(values.map((v) => JSON.stringify(v))))
  ).pipe(asDashboard(org))

const drain = Effect.gen(function*() {
  while (yield* Jobs.Jobs.use((j) => j.runNext("worker"))) {
    // next job
  }
})

layer(
  CoreLayer.pipe(
    Layer.provide(Settings),
    Layer.provide(Recording),
    Layer.provideMerge(
      Layer.mergeAll(
        MemoryStoreTestKit.pipe(Layer.provideMerge(MemoryStoreLayer)),
        Kernel.IdGenerator.uuidV7,
        ConformanceDns
      )
    )
  )
)("import jobs and bulk loads", (it) => {
  it.effect("a review import job reports the reviews it imported once it ended; other jobs and failed strict ones report none", () =>
    Effect.gen(function*() {
      const org = (yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Bulk" }))).id
      yield* Catalog.Catalogs.use((c) => c.createProduct({ slug: "mug", title: "Mug" })).pipe(asDashboard(org))
      const good = [1, 2, 3, 4, 5].map((i) => ({ externalId: `b${i}`, product: "mug", rating: 5 }))

      yield* importJob(org, "reviews", [...good, { externalId: "x", product: "missing", rating: 4 }])
      yield* drain
      assert.deepStrictEqual(loads, [[org, 5]])

      yield* importJob(org, "products", [{ slug: "cup", title: "Cup" }, { slug: "bowl", title: "Bowl" }])
      yield* importJob(org, "reviews", [{ externalId: "s1", product: "mug", rating: 5 }, {
        externalId: "s2",
        product: "missing",
        rating: 1
      }], true)
      yield* drain
      assert.deepStrictEqual(loads, [[org, 5]])
    }))
})
