/**
 * The order endpoints over HTTP (docs/DECISIONS.md §48): status codes, costs and permissions, and that every kind of
 * bad input is a 4xx in the error envelope that changes nothing.
 */
import { afterAll, describe, expect, it } from "vitest"
import { makeSeededServer, testStores } from "./SeededServer.ts"

const expectError = (res: { status: number; body: any }, status: number, code: string, path?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body?.error?.code).toBe(code)
  expect(typeof res.body.error.message).toBe("string")
  if (path !== undefined) expect(res.body.error.details.issues.map((i: any) => i.path)).toContain(path)
}

describe.each(testStores)("orders over HTTP (%s)", (_name, makeStore) => {
  const server = makeSeededServer(makeStore)
  afterAll(() => server.dispose())

  /** An organization with a product `mug`, and its key. */
  const shop = async () => {
    const tenant = await server.provision()
    const mug = await server.request("POST", "/products", { token: tenant.key, body: { slug: "mug", title: "Mug" } })
    expect(mug.status).toBe(201)
    return { ...tenant, mugId: mug.body.id as string }
  }

  const state = async (key: string) => ({
    orders: (await server.request("GET", "/orders", { token: key })).body,
    customers: (await server.request("GET", "/customers", { token: key })).body
  })

  it("POST, GET, PATCH, DELETE and list: statuses, costs, the order's shape", async () => {
    const { key, mugId } = await shop()
    const created = await server.request("POST", "/orders", {
      token: key,
      body: {
        externalId: "o-1",
        customer: { email: "Ada@Example.com" },
        lines: [{ productSlug: "mug", quantity: 2 }],
        status: "fulfilled"
      }
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.headers.get("x-rate-limit-cost")).toBe("1")
    expect(created.body).toMatchObject({
      externalId: "o-1",
      orderNumber: null,
      siteId: null,
      status: "fulfilled",
      lines: [{ productId: mugId, productVariantId: null, quantity: 2 }],
      deliveredAt: null,
      cancelledAt: null,
      metadata: {}
    })
    expect(created.body.fulfilledAt).toBe(created.body.createdAt)
    const id = created.body.id
    expect((await server.request("GET", `/orders/${id}`, { token: key })).body).toEqual(created.body)
    const patched = await server.request("PATCH", `/orders/${id}`, { token: key, body: { status: "delivered" } })
    expect(patched.status).toBe(200)
    expect(patched.body.status).toBe("delivered")
    expectError(
      await server.request("PATCH", `/orders/${id}`, { token: key, body: { status: "open" } }),
      409,
      "CONFLICT"
    )
    expectError(
      await server.request("POST", "/orders", {
        token: key,
        body: { externalId: "o-1", customerId: created.body.customerId, lines: [{ productId: mugId }] }
      }),
      409,
      "CONFLICT"
    )
    const bulk = await server.request(
      "PATCH",
      "/orders/bulk-update?filter=" + encodeURIComponent(JSON.stringify({ status: "delivered" })),
      { token: key, body: { status: "cancelled" } }
    )
    expect(bulk.body).toEqual({ count: 1 })
    expect(bulk.headers.get("x-rate-limit-cost")).toBe("5")
    const imported = await server.request("POST", "/orders/import", {
      token: key,
      body: { data: [{ externalId: "o-2", customer: "ada@example.com", lines: [{ productSlug: "mug" }] }] }
    })
    expect(imported.status).toBe(200)
    expect(imported.headers.get("x-rate-limit-cost")).toBe("10")
    expect(imported.body.imported).toHaveLength(1)
    const listed = await server.request("GET", "/orders?sort=createdAt&limit=1", { token: key })
    expect(listed.body.data.map((o: any) => o.id)).toEqual([id])
    expect(typeof listed.body.nextCursor).toBe("string")
    const deleted = await server.request("DELETE", `/orders/${id}`, { token: key })
    expect(deleted.body.status).toBe("cancelled")
    expectError(await server.request("GET", `/orders/${id}`, { token: key }), 404, "NOT_FOUND")
  })

  it("bad input is a 4xx in the envelope naming the field, and changes nothing", async () => {
    const { key, mugId } = await shop()
    const before = await state(key)
    const bodies: ReadonlyArray<readonly [unknown, string]> = [
      [{ lines: [{ productSlug: "mug" }] }, "body.customerId"],
      [{ customerId: mugId, customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }] }, "body.customerId"],
      [{ customer: { email: "a@example.com" }, lines: [] }, "body.lines"],
      [
        { customer: { email: "a@example.com" }, lines: [{ productSlug: "mug", productId: mugId }] },
        "body.lines[0].productId"
      ],
      [
        { customer: { email: "a@example.com" }, lines: [{ productSlug: "mug", quantity: 0 }] },
        "body.lines[0].quantity"
      ],
      [{ customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }], status: "cancelled" }, "body.status"],
      [{ customer: { email: "not an email" }, lines: [{ productSlug: "mug" }] }, "body.customer.email"],
      [
        { customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }], placedAt: "yesterday" },
        "body.placedAt"
      ],
      [{ customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }], totl: 1 }, "body.totl"],
      [{ customer: { email: "a@example.com" }, lines: [{ productSlug: "ghost" }] }, "body.lines[0].productSlug"],
      [
        { customer: { email: "a@example.com" }, lines: Array.from({ length: 101 }, () => ({ productSlug: "mug" })) },
        "body.lines"
      ]
    ]
    for (const [body, path] of bodies) {
      expectError(await server.request("POST", "/orders", { token: key, body }), 400, "INVALID_REQUEST", path)
    }
    expectError(await server.request("POST", "/orders", { token: key, rawBody: "{\"lines\":" }), 400, "INVALID_REQUEST")
    expectError(await server.request("GET", "/orders/not-a-uuid", { token: key }), 400, "INVALID_REQUEST", "path.id")
    expectError(await server.request("GET", "/orders?sort=total", { token: key }), 400, "INVALID_REQUEST", "query.sort")
    expectError(
      await server.request("GET", `/orders?filter=${encodeURIComponent("{\"total\":1}")}`, { token: key }),
      400,
      "INVALID_REQUEST",
      "filter.total"
    )
    expectError(
      await server.request("PATCH", "/orders/bulk-update?filter=%7B", { token: key, body: { status: "delivered" } }),
      400,
      "INVALID_REQUEST",
      "filter"
    )
    expectError(
      await server.request("PATCH", "/orders/bulk-update", { token: key, body: { status: "shipped" } }),
      400,
      "INVALID_REQUEST",
      "body.status"
    )
    expectError(
      await server.request("PATCH", `/orders/${mugId}`, { token: key, body: { status: "delivered" } }),
      404,
      "NOT_FOUND"
    )
    expectError(
      await server.request("POST", "/orders/import", {
        token: key,
        body: {
          data: [{
            externalId: "x",
            customer: "a@example.com",
            lines: [{ productSlug: "mug" }],
            deliveredAt: "2026-01-01T00:00:00Z"
          }]
        }
      }),
      400,
      "INVALID_REQUEST",
      "body.data[0].deliveredAt"
    )
    expectError(
      await server.request("POST", "/orders/import", {
        token: key,
        body: {
          strict: true,
          data: [{ externalId: "x", customer: "a@example.com", lines: [{ productSlug: "ghost" }] }]
        }
      }),
      422,
      "IMPORT_FAILED"
    )
    expect(await state(key)).toEqual(before)
  })

  it("permissions: orders:read and orders:write; another organization's order is a 404", async () => {
    const { key } = await shop()
    const order = await server.request("POST", "/orders", {
      token: key,
      body: { customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }] }
    })
    const reader = await server.provision({ permissions: ["orders:read"] })
    const forbidden = await server.request("POST", "/orders", {
      token: reader.key,
      body: { customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }] }
    })
    expectError(forbidden, 403, "FORBIDDEN")
    expect(forbidden.body.error.details.permission).toBe("orders:write")
    expectError(await server.request("GET", `/orders/${order.body.id}`, { token: reader.key }), 404, "NOT_FOUND")
    const writer = await server.provision({ permissions: ["orders:write"] })
    expectError(await server.request("GET", "/orders", { token: writer.key }), 403, "FORBIDDEN")
    const spec = (await server.request("GET", "/openapi.json")).body
    expect(spec.paths["/orders/import"].post["x-rate-limit-cost"]).toBe(10)
    expect(spec.paths["/orders/bulk-update"].patch["x-rate-limit-cost"]).toBe(5)
    expect(spec.paths["/orders/{id}"].delete["x-required-permission"]).toBe("orders:write")
    expect(spec.paths["/orders"].post.responses["201"]).toBeDefined()
  })
})
