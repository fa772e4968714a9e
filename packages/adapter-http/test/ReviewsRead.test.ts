/**
 * GET /reviews and GET /reviews/{id} over HTTP: every query parameter (limit, cursor, sort, search, filter,
 * include), every error, the JSON shape (extras absent unless included, nulls kept), permissions and scoping.
 */
import type { SeedReview } from "@feedback/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expectError } from "./Http.ts"
import { makeSeededServer, testStores } from "./SeededServer.ts"

const extras = ["importJob", "customer", "product", "response", "files", "answers", "collisions"]
const q = (value: unknown) => encodeURIComponent(typeof value === "string" ? value : JSON.stringify(value))
const at = (minutes: number) => new Date(Date.parse("2026-05-01T00:00:00.000Z") + minutes * 60_000).toISOString() as any

describe.each(testStores)("reviews over HTTP (%s)", (_name, makeStore) => {
  const server = makeSeededServer(makeStore)
  afterAll(() => server.dispose())

  let key: string
  let organizationId: string
  let products: Array<any>
  let customer: any
  let seeds: ReadonlyArray<SeedReview>

  beforeAll(async () => {
    ;({ key, organizationId } = await server.provision())
    products = []
    for (const [slug, title] of [["mug", "Blue Mug"], ["kettle", "Red Kettle"]]) {
      products.push((await server.request("POST", "/products", { token: key, body: { slug, title } })).body)
    }
    customer =
      (await server.request("POST", "/customers", { token: key, body: { email: "ada@example.com", firstName: "Ada" } }))
        .body
    seeds = await server.seed(
      organizationId,
      Array.from({ length: 30 }, (_, i) => ({
        productId: products[i % 2].id,
        customerId: i % 3 === 0 ? null : customer.id,
        fields: {
          title: i % 5 === 0 ? null : `Review ${i} ${i % 2 === 0 ? "sturdy" : "leaky"}`,
          rating: 1 + (i % 5),
          published: i % 4 !== 0,
          moderatedAt: i % 3 === 1 ? null : at(i * 2),
          createdAt: at(i),
          updatedAt: at(i),
          browserFingerprint: `fp${i % 4}`,
          ipAddress: i % 2 === 0 ? "10.0.0.1" : null,
          metadata: { batch: String(i % 3) }
        },
        ...(i % 2 === 0 ? { reply: { body: `Thanks ${i}` } } : {}),
        files: i % 3
      }))
    )
  })

  const get = (path: string, token = key) => server.request("GET", path, { token })
  const ids = (res: { body: any }) => res.body.data.map((r: any) => r.id)
  const newestFirst = () =>
    [...seeds].sort((a, b) => b.review.createdAt.localeCompare(a.review.createdAt)).map((s) => s.review.id)

  it("GET /reviews: {data, nextCursor}, newest first, default limit 50, stored fields only with nulls kept", async () => {
    const res = await get("/reviews")
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(["data", "nextCursor"])
    expect(res.body.nextCursor).toBeNull()
    expect(ids(res)).toEqual(newestFirst())
    const first = res.body.data.find((r: any) => r.id === seeds[0]!.review.id)
    expect(first.title).toBeNull()
    expect(first.customerId).toBeNull()
    for (const name of extras) expect(Object.hasOwn(first, name)).toBe(false)
    expect(res.headers.get("x-rate-limit-cost")).toBe("1")
  })

  it("limit and cursor walk every review exactly once; a cursor is bound to sort, filter and search", async () => {
    const seen: Array<string> = []
    let cursor: string | null = null
    do {
      const res: any = await get(`/reviews?limit=7${cursor === null ? "" : `&cursor=${q(cursor)}`}`)
      expect(res.status).toBe(200)
      expect(res.body.data.length).toBeLessThanOrEqual(7)
      seen.push(...ids(res))
      cursor = res.body.nextCursor
    } while (cursor !== null)
    expect(seen).toEqual(newestFirst())
    const first = await get("/reviews?limit=5")
    expectError(
      await get(`/reviews?limit=5&sort=rating&cursor=${q(first.body.nextCursor)}`),
      400,
      "INVALID_REQUEST",
      "cursor"
    )
    expectError(
      await get(`/reviews?limit=5&search=x&cursor=${q(first.body.nextCursor)}`),
      400,
      "INVALID_REQUEST",
      "cursor"
    )
    expectError(
      await get(`/reviews?filter=${q({ published: true })}&cursor=${q(first.body.nextCursor)}`),
      400,
      "INVALID_REQUEST",
      "cursor"
    )
    expectError(await get("/reviews?cursor=eyJ2IjoxfQ"), 400, "INVALID_REQUEST", "cursor")
    const other = await server.provision()
    // A cursor is bound to the organization it was issued in: another organization's use of it is a 400.
    expectError(
      await server.request("GET", `/reviews?limit=5&cursor=${q(first.body.nextCursor)}`, { token: other.key }),
      400,
      "INVALID_REQUEST",
      "cursor"
    )
  })

  it("every sort value orders by that field, then id, nulls last", async () => {
    for (const sort of ["rating", "-rating", "createdAt", "-createdAt", "moderatedAt", "-moderatedAt"]) {
      const res = await get(`/reviews?sort=${sort}&limit=250`)
      expect(res.status).toBe(200)
      const field = sort.replace("-", "")
      const values = res.body.data.map((r: any) => r[field])
      const nonNull = values.filter((v: unknown) => v !== null)
      const sorted = [...nonNull].sort((a: any, b: any) => (a < b ? -1 : a > b ? 1 : 0))
      expect(nonNull).toEqual(sort.startsWith("-") ? sorted.reverse() : sorted)
      expect(values.slice(nonNull.length).every((v: unknown) => v === null)).toBe(true)
    }
    expectError(await get("/reviews?sort=title"), 400, "INVALID_REQUEST", "query.sort")
    expectError(await get("/reviews?sort=-published"), 400, "INVALID_REQUEST", "query.sort")
  })

  it("search and filter (including product.*, customer.* and metadata.<key>) narrow the list, ANDed", async () => {
    const expectIds = (res: any, predicate: (s: SeedReview) => boolean) => {
      expect(res.status, res.text).toBe(200)
      expect([...ids(res)].sort()).toEqual(seeds.filter(predicate).map((s) => s.review.id).sort())
    }
    expectIds(await get("/reviews?search=STURDY&limit=250"), (s) => (s.review.title ?? "").includes("sturdy"))
    expectIds(await get("/reviews?search=red%20kettle&limit=250"), (s) => s.review.productId === products[1].id)
    expectIds(await get("/reviews?search=ada@&limit=250"), (s) => s.review.customerId === customer.id)
    const filter = { "product.id": products[0].id, published: true, createdAt: { $gte: at(10) } }
    expectIds(
      await get(`/reviews?filter=${q(filter)}&limit=250`),
      (s) => s.review.productId === products[0].id && s.review.published && s.review.createdAt >= at(10)
    )
    expectIds(
      await get(
        `/reviews?filter=${q({ "customer.email": "ada@example.com", rating: { $gte: 4 } })}&search=leaky&limit=250`
      ),
      (s) => s.review.customerId === customer.id && s.review.rating >= 4 && (s.review.title ?? "").includes("leaky")
    )
    expectIds(
      await get(`/reviews?filter=${q({ "metadata.batch": "2", "product.slug": "kettle" })}`),
      (s) => s.review.metadata["batch"] === "2" && s.review.productId === products[1].id
    )
    expectIds(
      await get(`/reviews?filter=${q({ $or: [{ moderatedAt: null }, { ipAddress: "10.0.0.1" }] })}`),
      (s) => s.review.moderatedAt === null || s.review.ipAddress === "10.0.0.1"
    )
    expectIds(await get(`/reviews?filter=${q({ "customer.id": null })}`), (s) => s.review.customerId === null)
    expectIds(await get("/reviews?filter=&search="), () => true)
  })

  it("bad filter, search, limit and unknown or repeated parameters are 400 naming the path", async () => {
    for (
      const [query, path] of [
        [`filter=${q({ nope: 1 })}`, "filter.nope"],
        [`filter=${q({ rating: { $like: 1 } })}`, "filter.rating.$like"],
        [`filter=${q({ rating: "high" })}`, "filter.rating"],
        [`filter=${q({ "product.id": 5 })}`, "filter.product.id"],
        [`filter=${q({ published: { $gte: true } })}`, "filter.published.$gte"],
        [`filter=${q({ "customer.metadata.tier": 1 })}`, "filter.customer.metadata.tier"],
        ["filter=%7B", "filter"],
        [`search=${"y".repeat(201)}`, "search"],
        ["limit=0", "query.limit"],
        ["limit=251", "query.limit"],
        ["limit=ten", "query.limit"],
        ["include=customer,votes", "query.include"],
        ["foo=bar", "query.foo"],
        ["limit=5&limit=6", "query.limit"],
        ["sort=rating&sort=-rating", "query.sort"]
      ] as const
    ) {
      expectError(await get(`/reviews?${query}`), 400, "INVALID_REQUEST", path)
    }
    // The contract decodes limit, sort and include (all their problems together, with the core's messages);
    // filter and search are the core's, which reports theirs together once the typed parameters are valid.
    const typed = await get("/reviews?limit=0&sort=x&include=votes")
    expect(typed.body.error.details.issues).toEqual([
      { path: "query.limit", message: "must be a whole number from 1 to 250" },
      {
        path: "query.sort",
        message:
          "must be one of rating, -rating, createdAt, -createdAt, moderatedAt, -moderatedAt, updatedAt, -updatedAt"
      },
      {
        path: "query.include",
        message:
          "\"votes\" cannot be included; use any of importJob, customer, product, response, files, answers, collisions"
      }
    ])
    expect(typed.body.error.message).toBe(
      "query.limit: must be a whole number from 1 to 250 (and 2 more issues, see details)."
    )
    const core = await get(`/reviews?limit=5&search=${"y".repeat(201)}&filter=${q({ a: 1 })}`)
    expect(core.body.error.details.issues.map((i: any) => i.path).sort()).toEqual(["filter.a", "search"])
  })

  it("include adds exactly the requested extras, on list and get; without it they are absent", async () => {
    const all = await get(`/reviews?limit=250&include=${extras.join(",")}`)
    expect(all.status).toBe(200)
    const plain = await get("/reviews?limit=250")
    expect(all.body.data.map((r: any) => Object.fromEntries(Object.entries(r).filter(([k]) => !extras.includes(k)))))
      .toEqual(plain.body.data)
    for (const review of all.body.data) {
      const seed = seeds.find((s) => s.review.id === review.id)!
      expect(review.product.id).toBe(review.productId)
      expect(review.customer === null ? null : review.customer.id).toBe(review.customerId)
      expect(review.response === null ? null : review.response.body).toBe(seed.reply?.body ?? null)
      expect(review.files.map((f: any) => f.id)).toEqual((seed.files ?? []).map((f) => f.id))
      expect(review.answers).toEqual([])
      expect(review.importJob).toBeNull()
      expect(review.collisions).toEqual({
        browserFingerprint: seeds.filter((s) =>
          s.review.id !== review.id && s.review.browserFingerprint === review.browserFingerprint
        ).length,
        ipAddress: review.ipAddress === null
          ? 0
          : seeds.filter((s) => s.review.id !== review.id && s.review.ipAddress === review.ipAddress).length
      })
    }
    const mug = all.body.data.find((r: any) => r.productId === products[0].id).product
    expect(mug.reviewCount).toBe(15)
    const one = seeds[2]!.review
    const got = await get(`/reviews/${one.id}?include=product,files`)
    expect(got.status).toBe(200)
    expect(extras.filter((n) => Object.hasOwn(got.body, n))).toEqual(["product", "files"])
    const bare = await get(`/reviews/${one.id}`)
    expect(extras.filter((n) => Object.hasOwn(bare.body, n))).toEqual([])
    expect(bare.body).toEqual(plain.body.data.find((r: any) => r.id === one.id))
    expectError(await get(`/reviews/${one.id}?include=everything`), 400, "INVALID_REQUEST", "query.include")
    expectError(await get(`/reviews/${one.id}?sort=rating`), 400, "INVALID_REQUEST", "query.sort")
  })

  it("GET /reviews/{id}: another organization's review and a missing one are the same 404; bad id 400", async () => {
    const other = await server.provision()
    const theirs =
      (await server.request("POST", "/products", { token: other.key, body: { slug: "mug", title: "Mug" } })).body
    const [foreign] = await server.seed(other.organizationId, [{ productId: theirs.id }])
    const res = await get(`/reviews/${foreign!.review.id}`)
    expectError(res, 404, "NOT_FOUND")
    expect(res.body.error.details).toEqual({ resource: "review" })
    expect((await get(`/reviews/${foreign!.review.id}`, other.key)).status).toBe(200)
    expectError(await get("/reviews/00000000-0000-4000-8000-000000000000"), 404, "NOT_FOUND")
    expectError(await get("/reviews/nope"), 400, "INVALID_REQUEST", "path.id")
    expect(ids(await get(`/reviews?filter=${q({ id: foreign!.review.id })}`))).toEqual([])
  })

  it("both endpoints need reviews:read", async () => {
    const writer = await server.provision({ permissions: ["reviews:write", "products:read"] })
    const res = await get("/reviews", writer.key)
    expectError(res, 403, "FORBIDDEN")
    expect(res.body.error.details.permission).toBe("reviews:read")
    expectError(await get(`/reviews/${seeds[0]!.review.id}`, writer.key), 403, "FORBIDDEN")
    expectError(await get("/reviews?limit=0", writer.key), 403, "FORBIDDEN")
    expectError(await server.request("GET", "/reviews"), 401, "UNAUTHORIZED")
  })

  it("the OpenAPI document describes both operations", async () => {
    const spec = (await server.request("GET", "/openapi.json")).body
    const list = spec.paths["/reviews"].get
    expect(list["x-required-permission"]).toBe("reviews:read")
    expect(list.parameters.map((p: any) => p.name).sort()).toEqual([
      "cursor",
      "filter",
      "include",
      "limit",
      "search",
      "sort"
    ])
    expect(spec.paths["/reviews/{id}"].get.parameters.map((p: any) => p.name).sort()).toEqual(["id", "include"])
  })
})
