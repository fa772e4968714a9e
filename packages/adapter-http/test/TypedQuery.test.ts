/**
 * The typed query parameters of the contract (`src/api/ListParams.ts`): what the OpenAPI document says about them,
 * the typed client sending them (`limit: 10`, `include: ["product"]`, `answered: false`), and the wire forms the
 * server accepts and refuses.
 */
import { Effect } from "effect"
import { FetchHttpClient } from "effect/http"
import { beforeAll, describe, expect, it } from "vitest"
import { AdminClient, AdminClientLayer } from "@feedback/client/effect"
import { useTestServer } from "./Http.ts"
import { makeTestServer } from "./TestServer.ts"

const http = useTestServer(() => makeTestServer())

/** Runs `program` with the typed client talking to the in-process server. */
const withClient = <A, E>(program: Effect.Effect<A, E, AdminClient>): Promise<A> =>
  Effect.runPromise(program.pipe(
    Effect.provide(AdminClientLayer({ baseUrl: "http://test", secretKey: http.key })),
    Effect.provideService(FetchHttpClient.Fetch, http.server.fetch as typeof globalThis.fetch)
  ))

const get = (path: string) => http.get(path)

const issuesOf = (res: { status: number; body: any }) => {
  expect(res.status, JSON.stringify(res.body)).toBe(400)
  expect(res.body.error.code).toBe("INVALID_REQUEST")
  return res.body.error.details.issues as Array<{ path: string; message: string }>
}

describe("the OpenAPI document", () => {
  let operations: Array<{ readonly name: string; readonly parameters: Array<any> }>
  beforeAll(async () => {
    const spec = (await http.server.request("GET", "/openapi.json")).body
    operations = Object.entries(spec.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => ({
        name: `${method.toUpperCase()} ${path}`,
        parameters: op.parameters ?? []
      }))
    )
  })
  const parametersNamed = (name: string) =>
    operations.flatMap((op) =>
      op.parameters.filter((p) => p.name === name && p.in === "query").map((p) => ({ op: op.name, schema: p.schema }))
    )

  it("types every limit as an integer from 1 to 250 (the storefront's lists: 1 to 50, default 10)", () => {
    const all = parametersNamed("limit")
    const storefront = all.filter((l) => l.op.startsWith("GET /storefront/"))
    expect(storefront.map((l) => l.op).sort()).toEqual([
      "GET /storefront/customer/reviews",
      "GET /storefront/products/{productIdOrSlug}/questions",
      "GET /storefront/products/{productIdOrSlug}/reviews"
    ])
    for (const { schema } of storefront) {
      expect(schema).toMatchObject({ type: "integer", minimum: 1, maximum: 50, default: 10 })
    }
    const limits = all.filter((l) => !l.op.startsWith("GET /storefront/"))
    expect(limits.map((l) => l.op).sort()).toEqual([
      "GET /customers",
      "GET /email-templates",
      "GET /events",
      "GET /orders",
      "GET /product-questions",
      "GET /products",
      "GET /reviews",
      "GET /sites",
      "GET /survey-flows",
      "GET /surveys",
      "GET /webhooks",
      "GET /webhooks/{id}/events"
    ])
    for (const { schema } of limits) {
      expect(schema).toMatchObject({ type: "integer", minimum: 1, maximum: 250, default: 50 })
    }
  })

  it("types every sort as an enum of the endpoint's fields, each ascending and descending", () => {
    const sorts = parametersNamed("sort")
    expect(sorts.map((s) => s.op).sort()).toEqual([
      "GET /customers",
      "GET /orders",
      "GET /product-questions",
      "GET /products",
      "GET /reviews",
      "GET /sites",
      "GET /storefront/products/{productIdOrSlug}/reviews",
      "GET /surveys"
    ])
    for (const { schema } of sorts) {
      expect(schema.type).toBe("string")
      const fields = (schema.enum as Array<string>).filter((v) => !v.startsWith("-"))
      expect([...schema.enum].sort()).toEqual(fields.flatMap((f) => [f, `-${f}`]).sort())
      expect(schema.enum).toContain(schema.default)
    }
    const reviews = sorts.find((s) => s.op === "GET /reviews")!.schema
    expect(reviews.enum).toEqual([
      "rating",
      "-rating",
      "createdAt",
      "-createdAt",
      "moderatedAt",
      "-moderatedAt",
      "updatedAt",
      "-updatedAt"
    ])
  })

  it("describes include as a comma-separated list of the endpoint's names, and answered as a boolean", () => {
    const includes = parametersNamed("include")
    expect(includes.map((i) => i.op).sort()).toEqual([
      "GET /product-questions",
      "GET /product-questions/{id}",
      "GET /reviews",
      "GET /reviews/{id}",
      "PATCH /product-questions/{id}"
    ])
    const reviews = includes.find((i) => i.op === "GET /reviews")!
    // A list of the endpoint's names, sent as one comma-separated value (`include=product,files`).
    expect(reviews.schema).toMatchObject({ type: "array", items: { type: "string" }, uniqueItems: true })
    expect(reviews.schema.items.enum).toEqual(expect.arrayContaining(["product", "files", "collisions"]))
    expect(reviews.schema.items.enum).not.toContain("votes")
    const parameter = operations.find((op) => op.name === "GET /reviews")!.parameters.find((p) => p.name === "include")
    expect(parameter).toMatchObject({ style: "form", explode: false })
    expect(parametersNamed("answered")).toEqual([
      { op: "GET /product-questions", schema: expect.objectContaining({ type: "boolean" }) }
    ])
  })
})

describe("the typed client", () => {
  it("sends typed list parameters: limit 10, a sort value, include and answered as a list and a boolean", async () => {
    const result = await withClient(Effect.gen(function*() {
      const client = yield* AdminClient
      for (const slug of ["mug", "cup", "teapot"]) {
        yield* client.products.create({ payload: { slug, title: slug } })
      }
      const first = yield* client.products.list({ query: { limit: 2, sort: "createdAt" } })
      const rest = yield* client.products.list({ query: { limit: 10, sort: "createdAt", cursor: first.nextCursor! } })
      const reviews = yield* client.reviewsRead.list({
        query: { limit: 10, sort: "-rating", include: ["product", "files"] }
      })
      const questions = yield* client.productQuestions.list({
        query: { limit: 10, answered: false, include: ["answers"] }
      })
      const webhooks = yield* client.webhooks.list({ query: { limit: 10 } })
      return { first, rest, reviews, questions, webhooks }
    }))
    expect(result.first.data.map((p) => p.slug)).toEqual(["mug", "cup"])
    expect(result.rest.data.map((p) => p.slug)).toEqual(["teapot"])
    expect(result.rest.nextCursor).toBeNull()
    expect(result.reviews).toEqual({ data: [], nextCursor: null })
    expect(result.questions).toEqual({ data: [], nextCursor: null })
    expect(result.webhooks.nextCursor).toBeNull()
  })

  it("refuses untyped values at compile time", () => {
    // Type-level only: never run.
    const untyped = (client: AdminClient["Service"]) => [
      // @ts-expect-error limit is a number
      client.products.list({ query: { limit: "10" } }),
      // @ts-expect-error not a sort value of products
      client.products.list({ query: { sort: "title" } }),
      // @ts-expect-error include is a list of the endpoint's names
      client.reviewsRead.list({ query: { include: "product" } }),
      // @ts-expect-error not an include of reviews
      client.reviewsRead.get({ params: { id: "x" as never }, query: { include: ["votes"] } }),
      // @ts-expect-error answered is a boolean
      client.productQuestions.list({ query: { answered: "true" } })
    ]
    expect(typeof untyped).toBe("function")
  })
})

describe("on the wire", () => {
  it("an empty value is the same as an omitted one", async () => {
    const res = await get("/reviews?limit=&sort=&include=&cursor=&search=&filter=")
    expect(res.status, res.text).toBe(200)
    expect((await get("/product-questions?answered=&limit=")).status).toBe(200)
    expect((await get("/webhooks?limit=")).status).toBe(200)
  })

  it("a bad value is a 400 naming query.<name> with the core's message", async () => {
    for (const raw of ["0", "251", "1.5", "1e2", "+5", " 5", "ten", "0x10"]) {
      expect(issuesOf(await get(`/webhooks?limit=${encodeURIComponent(raw)}`))).toEqual([
        { path: "query.limit", message: "must be a whole number from 1 to 250" }
      ])
    }
    expect(issuesOf(await get("/sites?sort=name"))).toEqual([
      { path: "query.sort", message: "must be one of createdAt, -createdAt" }
    ])
    expect(issuesOf(await get("/product-questions?answered=yes"))).toEqual([
      { path: "query.answered", message: "must be true or false, or be omitted to list both" }
    ])
    expect(issuesOf(await get("/product-questions/00000000-0000-4000-8000-000000000000?include=files"))).toEqual([
      { path: "query.include", message: "\"files\" cannot be included; use any of customer, product, answers" }
    ])
  })

  it("include keeps the core's reading: blanks and repeats ignored", async () => {
    expect((await get("/reviews?include=product,%20product,,files")).status).toBe(200)
  })

  it("a repeated parameter is a 400 naming it", async () => {
    expect(issuesOf(await get("/reviews?limit=5&limit=6"))).toEqual([
      { path: "query.limit", message: "expected a single value (the parameter is given once)" }
    ])
  })
})
