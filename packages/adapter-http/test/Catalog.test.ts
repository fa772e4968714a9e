/**
 * The catalog endpoints over HTTP (docs/DECISIONS.md §9): every endpoint, query parameter and error, the envelope of each
 * failure, and that bad input changes nothing.
 */
import { afterAll, describe, expect, it } from "vitest"
import { expectError, expectInvalid } from "./Http.ts"
import { makeSeededServer, testStores } from "./SeededServer.ts"

const timestamp = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe.each(testStores)("catalog over HTTP (%s)", (_name, makeStore) => {
  const server = makeSeededServer(makeStore)
  afterAll(() => server.dispose())

  describe("sites", () => {
    it("POST /sites 201, GET /sites and GET /sites/{id}; settings permissions; other organizations see 404", async () => {
      const { key } = await server.provision()
      const created = await server.request("POST", "/sites", {
        token: key,
        body: { name: "Main", domain: "shop.example.com" }
      })
      expect(created.status).toBe(201)
      expect(created.body).toEqual({
        id: expect.any(String),
        name: "Main",
        domain: "shop.example.com",
        createdAt: expect.stringMatching(timestamp),
        updatedAt: created.body.createdAt
      })
      const nulled = await server.request("POST", "/sites", { token: key, body: { name: "Outlet", domain: null } })
      expect(nulled.body.domain).toBeNull()
      const got = await server.request("GET", `/sites/${created.body.id}`, { token: key })
      expect(got.body).toEqual(created.body)
      const list = await server.request("GET", "/sites?limit=1", { token: key })
      expect(list.body.data).toHaveLength(1)
      expect(typeof list.body.nextCursor).toBe("string")
      const next = await server.request("GET", `/sites?limit=1&cursor=${list.body.nextCursor}`, { token: key })
      expect(next.body.nextCursor).toBeNull()
      expect([list.body.data[0].id, next.body.data[0].id].sort()).toEqual([created.body.id, nulled.body.id].sort())
      const searched = await server.request("GET", "/sites?search=SHOP.EXAMPLE", { token: key })
      expect(searched.body.data.map((s: any) => s.id)).toEqual([created.body.id])
      const other = await server.provision()
      expectError(await server.request("GET", `/sites/${created.body.id}`, { token: other.key }), 404, "NOT_FOUND")
      expectError(await server.request("GET", "/sites/not-a-uuid", { token: key }), 400, "INVALID_REQUEST", "path.id")
      expectError(
        await server.request("POST", "/sites", { token: key, body: { name: "" } }),
        400,
        "INVALID_REQUEST",
        "body.name"
      )
      expectError(
        await server.request("POST", "/sites", { token: key, body: { name: "x", domian: "y" } }),
        400,
        "INVALID_REQUEST",
        "body.domian"
      )
      const reader = await server.provision({ permissions: ["settings:read"] })
      const forbidden = await server.request("POST", "/sites", { token: reader.key, body: { name: "x" } })
      expectError(forbidden, 403, "FORBIDDEN")
      expect(forbidden.body.error.details.permission).toBe("settings:write")
      expect((await server.request("GET", "/sites", { token: reader.key })).status).toBe(200)
    })
  })

  describe("products", () => {
    it("POST /products: 201 with every field, defaults, null accepted where nullable; 409 on slug or externalId", async () => {
      const { key } = await server.provision()
      const res = await server.request("POST", "/products", {
        token: key,
        body: {
          slug: "mug",
          title: "Blue mug",
          description: "Holds coffee",
          imageUrl: "https://cdn.example.com/mug.jpg",
          url: "https://shop.example.com/mug",
          externalId: "sku-1",
          metadata: { color: "blue" },
          notes: null
        }
      })
      expect(res.status).toBe(201)
      expect(res.body).toMatchObject({
        slug: "mug",
        externalId: "sku-1",
        notes: null,
        metadata: { color: "blue" },
        reviewCount: 0,
        publishedReviewCount: 0,
        averageRating: null
      })
      expect(res.headers.get("x-rate-limit-cost")).toBe("1")
      const dupSlug = await server.request("POST", "/products", { token: key, body: { slug: "mug", title: "Other" } })
      expectError(dupSlug, 409, "CONFLICT")
      expect(dupSlug.body.error.message).toContain("slug")
      expectError(
        await server.request("POST", "/products", {
          token: key,
          body: { slug: "cup", title: "Cup", externalId: "sku-1" }
        }),
        409,
        "CONFLICT"
      )
      const list = await server.request("GET", "/products", { token: key })
      expect(list.body.data).toHaveLength(1)
    })

    it("bad product bodies are 400s naming the field, and nothing is stored", async () => {
      const { key } = await server.provision()
      for (
        const [body, path] of [
          [{ title: "No slug" }, "body.slug"],
          [{ slug: "a", title: "A", publised: true }, "body.publised"],
          [{ slug: "a", title: 42 }, "body.title"],
          [{ slug: " a", title: "A" }, "body.slug"],
          [{ slug: "a", title: "A\u0000B" }, "body.title"],
          [{ slug: "a", title: "A", metadata: { n: 1 } }, "body.metadata.n"],
          [{ slug: "a", title: "A", metadata: "x" }, "body.metadata"],
          [{ slug: "a", title: null }, "body.title"],
          [{ slug: "a", title: "A", description: "x".repeat(20_001) }, "body.description"]
        ] as const
      ) {
        expectError(await server.request("POST", "/products", { token: key, body }), 400, "INVALID_REQUEST", path)
      }
      expectError(
        await server.request("POST", "/products", { token: key, rawBody: "{\"slug\":" }),
        400,
        "INVALID_REQUEST"
      )
      expect((await server.request("GET", "/products", { token: key })).body.data).toEqual([])
    })

    it("GET /products: limit, cursor, sort, search, filter; unknown or repeated parameters are 400", async () => {
      const { key } = await server.provision()
      const slugs = ["mug", "kettle", "teapot", "cup"]
      for (const [i, slug] of slugs.entries()) {
        const res = await server.request("POST", "/products", {
          token: key,
          body: { slug, title: `The ${slug}`, metadata: { color: i % 2 === 0 ? "blue" : "red" } }
        })
        expect(res.status).toBe(201)
      }
      const walk = async (query: string) => {
        const seen: Array<string> = []
        let cursor: string | null = null
        do {
          const res: any = await server.request(
            "GET",
            `/products?${query}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`,
            { token: key }
          )
          expect(res.status, res.text).toBe(200)
          seen.push(...res.body.data.map((p: any) => p.slug))
          cursor = res.body.nextCursor
        } while (cursor !== null)
        return seen
      }
      expect(await walk("limit=1")).toEqual(["cup", "teapot", "kettle", "mug"])
      expect(await walk("limit=3&sort=createdAt")).toEqual(["mug", "kettle", "teapot", "cup"])
      expect(await walk("search=KETTLE")).toEqual(["kettle"])
      expect(await walk(`filter=${encodeURIComponent(JSON.stringify({ "metadata.color": "blue" }))}&limit=1`)).toEqual([
        "teapot",
        "mug"
      ])
      expect(await walk(`filter=${encodeURIComponent(JSON.stringify({ slug: { $in: ["cup", "mug"] } }))}&search=u`))
        .toEqual(["cup", "mug"])
      const first = await server.request("GET", "/products?limit=1", { token: key })
      for (
        const [query, path] of [
          ["limit=0", "query.limit"],
          ["limit=abc", "query.limit"],
          ["sort=title", "query.sort"],
          ["filter=%7B%22rating%22%3A1%7D", "filter.rating"],
          ["filter=not-json", "filter"],
          ["cursor=abc", "cursor"],
          [`sort=createdAt&cursor=${first.body.nextCursor}`, "cursor"],
          ["include=reviews", "query.include"],
          ["limitt=5", "query.limitt"],
          ["limit=1&limit=2", "query.limit"]
        ] as const
      ) {
        expectError(await server.request("GET", `/products?${query}`, { token: key }), 400, "INVALID_REQUEST", path)
      }
    })

    it("PATCH /products/{id}: sent fields only, metadata replaced wholesale, null clears; 409, 404, 400", async () => {
      const { key } = await server.provision()
      const mug = (await server.request("POST", "/products", {
        token: key,
        body: { slug: "mug", title: "Mug", description: "d", metadata: { a: "1", b: "2" } }
      })).body
      await server.request("POST", "/products", { token: key, body: { slug: "cup", title: "Cup" } })
      const patched = await server.request("PATCH", `/products/${mug.id}`, {
        token: key,
        body: { title: "Big mug", description: null, metadata: { c: "3" } }
      })
      expect(patched.status).toBe(200)
      expect(patched.body).toMatchObject({ slug: "mug", title: "Big mug", description: null, metadata: { c: "3" } })
      const omitted = await server.request("PATCH", `/products/${mug.id}`, { token: key, body: { notes: "n" } })
      expect(omitted.body).toMatchObject({ title: "Big mug", metadata: { c: "3" }, notes: "n" })
      expectError(
        await server.request("PATCH", `/products/${mug.id}`, { token: key, body: { slug: "cup" } }),
        409,
        "CONFLICT"
      )
      expectError(
        await server.request("PATCH", `/products/${mug.id}`, { token: key, body: { slug: null } }),
        400,
        "INVALID_REQUEST",
        "body.slug"
      )
      expectError(
        await server.request("PATCH", `/products/${mug.id}`, { token: key, body: { reviewCount: 5 } }),
        400,
        "INVALID_REQUEST",
        "body.reviewCount"
      )
      expectError(
        await server.request("PATCH", "/products/00000000-0000-4000-8000-000000000000", {
          token: key,
          body: { title: "x" }
        }),
        404,
        "NOT_FOUND"
      )
      const other = await server.provision()
      expectError(
        await server.request("PATCH", `/products/${mug.id}`, { token: other.key, body: { title: "x" } }),
        404,
        "NOT_FOUND"
      )
      expect((await server.request("GET", `/products/${mug.id}`, { token: key })).body.title).toBe("Big mug")
    })

    it("DELETE /products/{id}: 200 with the deleted product, then 404; 409 while reviews refer to it", async () => {
      const { key, organizationId } = await server.provision()
      const lonely =
        (await server.request("POST", "/products", { token: key, body: { slug: "lonely", title: "Lonely" } })).body
      const reviewed =
        (await server.request("POST", "/products", { token: key, body: { slug: "reviewed", title: "Reviewed" } })).body
      await server.seed(organizationId, [{ productId: reviewed.id }])
      const deleted = await server.request("DELETE", `/products/${lonely.id}`, { token: key })
      expect(deleted.status).toBe(200)
      expect(deleted.body).toEqual(lonely)
      expectError(await server.request("GET", `/products/${lonely.id}`, { token: key }), 404, "NOT_FOUND")
      expectError(await server.request("DELETE", `/products/${lonely.id}`, { token: key }), 404, "NOT_FOUND")
      expectError(await server.request("DELETE", `/products/${reviewed.id}`, { token: key }), 409, "CONFLICT")
      expect((await server.request("GET", `/products/${reviewed.id}`, { token: key })).body.reviewCount).toBe(1)
    })

    it("POST /products/import: per-row outcomes, strict 422 IMPORT_FAILED with nothing imported, limits", async () => {
      const { key } = await server.provision()
      await server.request("POST", "/products", { token: key, body: { slug: "existing", title: "E" } })
      const res = await server.request("POST", "/products/import", {
        token: key,
        body: {
          data: [{ slug: "a", title: "A" }, { slug: "existing", title: "E2" }, { slug: "a", title: "A2" }, {
            slug: "b",
            title: "B",
            externalId: "x"
          }]
        }
      })
      expect(res.status).toBe(200)
      expect(res.headers.get("x-rate-limit-cost")).toBe("10")
      expect(res.body.imported.map((r: any) => r.index)).toEqual([0, 3])
      expect(res.body.skipped).toEqual([
        { index: 1, message: expect.stringContaining("already exists") },
        { index: 2, message: expect.stringContaining("repeats row 0") }
      ])
      const strict = await server.request("POST", "/products/import", {
        token: key,
        body: { strict: true, data: [{ slug: "c", title: "C" }, { slug: "d", title: "D", externalId: "x" }] }
      })
      expectError(strict, 422, "IMPORT_FAILED")
      expect(strict.body.error.details).toEqual({ index: 1, message: strict.body.error.message })
      const badRow = await server.request("POST", "/products/import", {
        token: key,
        body: { data: [{ slug: "e", title: "E" }, { slug: "f" }] }
      })
      expectError(badRow, 400, "INVALID_REQUEST", "body.data[1].title")
      const tooMany = await server.request("POST", "/products/import", {
        token: key,
        body: { data: Array.from({ length: 10_001 }, (_, i) => ({ slug: `s${i}`, title: "t" })) }
      })
      expectError(tooMany, 400, "INVALID_REQUEST", "body.data")
      expectError(
        await server.request("POST", "/products/import", { token: key, body: { rows: [] } }),
        400,
        "INVALID_REQUEST"
      )
      const slugs = (await server.request("GET", "/products?limit=250", { token: key })).body.data.map((p: any) =>
        p.slug
      ).sort()
      expect(slugs).toEqual(["a", "b", "existing"])
      const full = await server.request("POST", "/products/import", {
        token: key,
        body: { data: Array.from({ length: 10_000 }, (_, i) => ({ slug: `bulk-${i}`, title: `Bulk ${i}` })) }
      })
      expect(full.status, full.text).toBe(200)
      expect(full.body.imported).toHaveLength(10_000)
    }, 120_000)

    it("product endpoints need products:read / products:write", async () => {
      const reader = await server.provision({ permissions: ["products:read"] })
      expectError(
        await server.request("POST", "/products", { token: reader.key, body: { slug: "a", title: "A" } }),
        403,
        "FORBIDDEN"
      )
      expectError(
        await server.request("POST", "/products/import", { token: reader.key, body: { data: [] } }),
        403,
        "FORBIDDEN"
      )
      expect((await server.request("GET", "/products", { token: reader.key })).status).toBe(200)
      const none = await server.provision({ permissions: ["reviews:read"] })
      expectError(await server.request("GET", "/products", { token: none.key }), 403, "FORBIDDEN")
      expectError(
        await server.request("GET", "/products/00000000-0000-4000-8000-000000000000", { token: none.key }),
        403,
        "FORBIDDEN"
      )
    })
  })

  describe("customers", () => {
    it("POST/GET /customers, import, email lower-cased and unique (409), permissions", async () => {
      const { key } = await server.provision()
      const ada = await server.request("POST", "/customers", {
        token: key,
        body: {
          email: "Ada@Example.com",
          firstName: "Ada",
          lastName: null,
          metadata: { tier: "gold" },
          emailOptOut: true,
          emailOptOutSource: "unsubscribe"
        }
      })
      expect(ada.status).toBe(201)
      expect(ada.body).toMatchObject({
        email: "ada@example.com",
        lastName: null,
        emailOptOut: true,
        emailOptOutSource: "unsubscribe"
      })
      expect(ada.body.emailOptOutAt).toMatch(timestamp)
      expectError(
        await server.request("POST", "/customers", { token: key, body: { email: "ADA@example.com" } }),
        409,
        "CONFLICT"
      )
      const refused = [
        [{ email: "not-an-email" }, "body.email"],
        [{ email: "b@example.com", emailOptOutAt: "2026-01-01T00:00:00Z" }, "body.emailOptOutAt"],
        [{ email: "b@example.com", emailOptOut: "yes" }, "body.emailOptOut"]
      ] as const
      for (const [body, path] of refused) {
        expectInvalid(await server.request("POST", "/customers", { token: key, body }), path)
      }
      expect((await server.request("GET", `/customers/${ada.body.id}`, { token: key })).body).toEqual(ada.body)
      const imported = await server.request("POST", "/customers/import", {
        token: key,
        body: { data: [{ email: "grace@example.com", firstName: "Grace" }, { email: "ada@EXAMPLE.com" }] }
      })
      expect(imported.status).toBe(200)
      expect(imported.body.imported.map((r: any) => r.index)).toEqual([0])
      expect(imported.body.skipped.map((r: any) => r.index)).toEqual([1])
      const strict = await server.request("POST", "/customers/import", {
        token: key,
        body: { strict: true, data: [{ email: "new@example.com" }, { email: "grace@example.com" }] }
      })
      expectError(strict, 422, "IMPORT_FAILED")
      expect(strict.body.error.details.index).toBe(1)
      const list = await server.request("GET", "/customers?search=grace", { token: key })
      expect(list.body.data.map((c: any) => c.email)).toEqual(["grace@example.com"])
      const filtered = await server.request(
        "GET",
        `/customers?filter=${encodeURIComponent(JSON.stringify({ emailOptOut: true }))}`,
        { token: key }
      )
      expect(filtered.body.data.map((c: any) => c.email)).toEqual(["ada@example.com"])
      expectError(
        await server.request("GET", "/customers?filter=%7B%22phone%22%3A%221%22%7D", { token: key }),
        400,
        "INVALID_REQUEST",
        "filter.phone"
      )
      const other = await server.provision()
      expectError(await server.request("GET", `/customers/${ada.body.id}`, { token: other.key }), 404, "NOT_FOUND")
      const reader = await server.provision({ permissions: ["customers:read"] })
      expectError(
        await server.request("POST", "/customers", { token: reader.key, body: { email: "x@example.com" } }),
        403,
        "FORBIDDEN"
      )
      expectError(
        await server.request("POST", "/customers/import", { token: reader.key, body: { data: [] } }),
        403,
        "FORBIDDEN"
      )
      const products = await server.provision({ permissions: ["products:read"] })
      expectError(await server.request("GET", "/customers", { token: products.key }), 403, "FORBIDDEN")
    })
  })

  it("the OpenAPI document lists the catalog routes with permissions and costs", async () => {
    const spec = (await server.request("GET", "/openapi.json")).body
    expect(spec.paths["/products/import"].post["x-rate-limit-cost"]).toBe(10)
    expect(spec.paths["/customers/import"].post["x-required-permission"]).toBe("customers:write")
    expect(spec.paths["/products/{id}"].delete["x-required-permission"]).toBe("products:write")
    expect(spec.paths["/sites"].post.responses["201"]).toBeDefined()
  })
})
