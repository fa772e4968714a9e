/**
 * `npm run bench -- storefront`: storefront reads on a large PostgreSQL data set (the `reviews-list` data set,
 * BENCH_REVIEWS, default 1,000,000 reviews over BENCH_PRODUCTS, default 10,000 products), through the real web handler
 * in this process (publishable key, the key-and-address bucket, parsing, the reads, JSON, ETag), in the same run as
 * the floor: one HttpApi endpoint with no middleware, the key found in a Map, the same statements and
 * `JSON.stringify` (`support/storefront-floor.ts`), interleaved. Rows:
 * - `GET /storefront/ratings` for 24 products, and the first page of a product's reviews: the floor's time over the
 *   route's (throughput relative to the floor), target ≥ 0.7×;
 * - a revalidation answered 304 (`If-None-Match` with the tag of the full answer): this process's CPU per request
 *   over the full answer's, target ≤ 0.3×;
 * - a refused 429 (an organization whose storefront reads are spent): its CPU over an admitted ratings request's,
 *   target ≤ 0.25×.
 * Medians of BENCH_RUNS (default 200) interleaved runs after warm-ups. BENCH_KEEP=1 keeps the database;
 * BENCH_CPU_PROFILE with BENCH_PROFILE_VARIANT (a variant's name) profiles one variant (`support/dataset-handler.ts`).
 */
import { Catalog, Kernel, Organizations, Reviews, Storefront } from "@feedback/core"
import { untracedRequests } from "@feedback/adapter-http/server"
import { Effect, Option, Result } from "effect"
import { datasetId } from "../packages/adapter-postgres/src/testing/ReviewDataset.ts"
import { interleaved, median, openDatasetHandler, positiveEnv, profileVariant } from "./support/dataset-handler.ts"
import { makeStorefrontFloor } from "./support/storefront-floor.ts"
import { recordRow } from "./support/targets.ts"

const reviews = positiveEnv("BENCH_REVIEWS", 1_000_000)
const runs = positiveEnv("BENCH_RUNS", 200)
const bench = await openDatasetHandler()
const { handler, runtime } = bench
let disposeFloor: (() => Promise<void>) | undefined

try {
  const setup = await runtime.runPromise(Effect.gen(function*() {
    const organizations = yield* Organizations.Organizations
    // Ceilings the timed requests cannot exhaust: every request is still charged to its key-and-address bucket.
    const org = yield* organizations.createOrganization({ name: "Benchmark", apiRequestsPerMinute: 1_000_000 })
    yield* organizations.updatePlan(org.id, { storefrontReadsPerMinute: 1_000_000 })
    const key = yield* organizations.createPublishableKey(org.id)
    // The refused side: an organization whose storefront reads are one a minute, spent before timing.
    const spent = yield* organizations.createOrganization({ name: "Spent" })
    yield* organizations.updatePlan(spent.id, { storefrontReadsPerMinute: 1 })
    const spentKey = yield* organizations.createPublishableKey(spent.id)
    return {
      organizationId: org.id as Kernel.OrganizationId,
      key: key.key,
      spentKey: spentKey.key,
      cursorKey: yield* Kernel.CursorKey
    }
  }))
  const { cursorKey, key, organizationId, spentKey } = setup
  await bench.generate(organizationId, "storefront")

  const productIds = Array.from({ length: 24 }, (_, i) => datasetId(organizationId, "p", 1 + i * 37))
  const ratingsPath = `/storefront/ratings?products=${productIds.join(",")}`
  const reviewsPath = `/storefront/products/${datasetId(organizationId, "p", 42)}/reviews`
  const get = (path: string, headers: Record<string, string>, expected: number) => async () => {
    const res = await handler(new Request(`http://bench${path}`, { headers }))
    const text = await res.text()
    if (res.status !== expected) throw new Error(`GET ${path} answered ${res.status}, not ${expected}: ${text}`)
    return res
  }
  const ratings = get(ratingsPath, { "x-publishable-key": key }, 200)
  const productReviews = get(reviewsPath, { "x-publishable-key": key }, 200)
  const etag = (await ratings()).headers.get("etag")!
  const reviewsEtag = (await productReviews()).headers.get("etag")!
  const ratings304 = get(ratingsPath, { "x-publishable-key": key, "if-none-match": etag }, 304)
  const reviews304 = get(reviewsPath, { "x-publishable-key": key, "if-none-match": reviewsEtag }, 304)
  await get(ratingsPath, { "x-publishable-key": spentKey }, 200)()
  const refused = get(ratingsPath, { "x-publishable-key": spentKey }, 429)

  // The floor's reads: the statements the route cannot do without, with the route's own parsing.
  const parseProducts = (ids: ReadonlyArray<string>) => {
    const parsed = Kernel.parseListRequest(
      { filter: JSON.stringify({ $or: [{ id: { $in: ids } }, { slug: { $in: ids } }] }), limit: 250 },
      Catalog.productListEndpoint,
      { key: cursorKey, organizationId }
    )
    if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
    return parsed.success
  }
  const floorMade = makeStorefrontFloor(await bench.built(), {
    publishableKey: key,
    organizationId,
    ratings: (ids) =>
      Effect.map(
        Catalog.CatalogRepository.use((c) => c.listProducts(organizationId, parseProducts(ids))),
        (page) => ({ data: page.data.map(Storefront.toProductRating) })
      ),
    reviews: (productId) =>
      Effect.gen(function*() {
        const product = yield* Catalog.CatalogRepository.use((c) => c.findProduct(organizationId, productId as never))
        if (Option.isNone(product)) throw new Error("the floor's product is missing")
        const parsed = Kernel.parseListRequest(
          {
            limit: 10,
            filter: Storefront.publishedReviewsFilter(product.value.id, undefined),
            include: Storefront.storefrontReviewListEndpoint.includes
          },
          Storefront.storefrontReviewListEndpoint,
          { key: cursorKey, organizationId }
        )
        if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
        const page = yield* Reviews.ReviewRepository.use((r) => r.list(organizationId, parsed.success))
        return { data: page.data.map(Storefront.toStorefrontReview), nextCursor: page.nextCursor }
      })
  })
  disposeFloor = floorMade.dispose
  const floorGet = (path: string) => async () => {
    const res = await floorMade.handler(
      new Request(`http://bench${path}`, { headers: { "x-publishable-key": key } }),
      untracedRequests as Parameters<typeof floorMade.handler>[1]
    )
    const text = await res.text()
    if (res.status !== 200) throw new Error(`floor GET ${path} answered ${res.status}: ${text}`)
    return res
  }
  const floorRatings = floorGet(`/ratings?products=${productIds.join(",")}`)
  const floorReviews = floorGet(`/reviews?product=${datasetId(organizationId, "p", 42)}`)

  const variants = {
    ratings,
    floorRatings,
    ratings304,
    refused,
    productReviews,
    floorReviews,
    reviews304
  } as const
  type Name = keyof typeof variants
  const { cpu, wall } = await interleaved(variants, runs, 20)
  await profileVariant(variants)
  if (process.env["BENCH_WRITES"] === "1") {
    // Socket writes per call (about one per statement sent to the database): what the route sends beyond its floor.
    const net = await import("node:net")
    const write = net.Socket.prototype.write
    let writes = 0
    net.Socket.prototype.write = function(this: unknown, ...args: Array<unknown>) {
      writes++
      return (write as (...a: Array<unknown>) => boolean).apply(this, args)
    } as typeof write
    for (const n of Object.keys(variants) as Array<keyof typeof variants>) {
      writes = 0
      for (let i = 0; i < 50; i++) await variants[n]()
      console.log(`  ${n}: ${(writes / 50).toFixed(2)} socket writes per call`)
    }
    net.Socket.prototype.write = write
  }
  const w = (n: Name) => median(wall[n])
  const c = (n: Name) => median(cpu[n])
  const size = reviews === 1_000_000 ? {} : { note: `${reviews.toLocaleString("en-US")} reviews` }
  const ratingsRatio = w("floorRatings") / w("ratings")
  const reviewsRatio = w("floorReviews") / w("productReviews")
  const revalidation = c("ratings304") / c("ratings")
  const reviewsRevalidation = c("reviews304") / c("productReviews")
  const refusal = c("refused") / c("ratings")
  recordRow("storefront-ratings", ratingsRatio, size)
  recordRow("storefront-reviews", reviewsRatio, size)
  recordRow("storefront-304", Math.max(revalidation, reviewsRevalidation), size)
  recordRow("storefront-429", refusal, size)
  console.log(`\n  medians of ${runs} interleaved runs; CPU is this process's (the database's is not in it)\n`)
  console.table(
    (Object.keys(variants) as Array<Name>).map((n) => ({
      variant: n,
      "wall ms": w(n).toFixed(2),
      "CPU µs": c(n).toFixed(0)
    }))
  )
  console.log(`  ratings of 24 products: floor/route ${ratingsRatio.toFixed(2)}× (target ≥ 0.7×)`)
  console.log(`  a product's first page of reviews: floor/route ${reviewsRatio.toFixed(2)}× (target ≥ 0.7×)`)
  console.log(
    `  304 revalidation, CPU vs the full answer: ratings ${revalidation.toFixed(2)}×, reviews ${
      reviewsRevalidation.toFixed(2)
    }× (target ≤ 0.3×)`
  )
  console.log(`  a refused 429, CPU vs an admitted ratings request: ${refusal.toFixed(2)}× (target ≤ 0.25×)`)
} finally {
  await bench.close(disposeFloor === undefined ? [] : [disposeFloor])
}
