/**
 * The pure rules of orders (docs/DECISIONS.md §48), without any store: the status moves and their stamps, what a PATCH
 * does, how lines resolve, and the request schemas' "exactly one of" checks.
 */
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { Result, Schema } from "effect"
import { Kernel, Orders } from "@feedback/core"

const AT = "2026-02-01T00:00:00.000Z" as Kernel.Timestamp.Timestamp
const LATER = "2026-02-02T00:00:00.000Z" as Kernel.Timestamp.Timestamp
const P1 = "0190f000-0000-7000-8000-000000000001" as Kernel.ProductId
const P2 = "0190f000-0000-7000-8000-000000000002" as Kernel.ProductId
const order = (status: Orders.OrderStatus = "open"): Orders.Order => ({
  ...Orders.newOrder("0190f000-0000-7000-8000-0000000000aa" as Kernel.OrderId, AT, {
    customerId: "0190f000-0000-7000-8000-0000000000bb" as Kernel.CustomerId,
    lines: [{ productId: P1, productVariantId: null, quantity: 1 }]
  }),
  status
})

/** The order of statuses along the forward path; cancelled is reachable from all but itself. */
const rank: Record<Orders.OrderStatus, number> = { open: 0, fulfilled: 1, delivered: 2, cancelled: 3 }

describe("moveStatus", () => {
  it("allows exactly the forward moves and cancellation; the same status is no move", () => {
    fc.assert(
      fc.property(fc.constantFrom(...Orders.ORDER_STATUSES), fc.constantFrom(...Orders.ORDER_STATUSES), (from, to) => {
        const move = Orders.moveStatus(order(from), to, LATER)
        if (from === to) return move._tag === "Unchanged"
        const allowed = from !== "cancelled" && rank[to] > rank[from]
        return allowed ? move._tag === "Moved" && move.order.status === to : move._tag === "Refused"
      })
    )
  })

  it("stamps the time of each status passed: open → delivered stamps both, fulfilled → delivered only delivery", () => {
    const straight = Orders.moveStatus(order("open"), "delivered", LATER)
    expect(straight._tag === "Moved" && [straight.order.fulfilledAt, straight.order.deliveredAt, straight.stamped])
      .toEqual([LATER, LATER, ["fulfilledAt", "deliveredAt"]])
    const fulfilled = { ...order("fulfilled"), fulfilledAt: AT }
    const next = Orders.moveStatus(fulfilled, "delivered", LATER)
    expect(next._tag === "Moved" && [next.order.fulfilledAt, next.order.deliveredAt]).toEqual([AT, LATER])
    const cancelled = Orders.moveStatus(order("delivered"), "cancelled", LATER)
    expect(cancelled._tag === "Moved" && cancelled.order.cancelledAt).toBe(LATER)
  })
})

describe("planOrderPatch", () => {
  it("changes nothing for the same status and metadata; refuses a backward move; replaces metadata", () => {
    const current = { ...order("fulfilled"), metadata: { a: "1" } }
    expect(Orders.planOrderPatch(current, { status: "fulfilled", metadata: { a: "1" } }, LATER)._tag).toBe("Unchanged")
    expect(Orders.planOrderPatch(current, { status: "open" }, LATER)).toEqual({
      _tag: "Refused",
      from: "fulfilled",
      to: "open"
    })
    const changed = Orders.planOrderPatch(current, { metadata: { b: "2" } }, LATER)
    expect(
      changed._tag === "Changed" &&
        [changed.order.metadata, changed.order.updatedAt, changed.order.status, changed.stamped]
    )
      .toEqual([{ b: "2" }, LATER, "fulfilled", []])
  })
})

describe("resolveLines", () => {
  const refs = {
    productIds: new Set<string>([P1]),
    productsBySlug: new Map([["cup", P2]]),
    customerIds: new Set<string>(),
    customersByEmail: new Map(),
    siteIds: new Set<string>(),
    takenExternalIds: new Set<string>()
  }
  it("resolves by id or slug with quantity 1 by default, and names every unresolved line", () => {
    expect(Orders.resolveLines([{ productId: P1, quantity: 2 }, { productSlug: "cup" }], refs, "body.lines"))
      .toEqual(
        Result.succeed([{ productId: P1, productVariantId: null, quantity: 2 }, {
          productId: P2,
          productVariantId: null,
          quantity: 1
        }])
      )
    const failed = Orders.resolveLines([{ productSlug: "mug" }, { productId: P2 }], refs, "body.lines")
    expect(Result.isFailure(failed) && failed.failure.map((i) => i.path)).toEqual([
      "body.lines[0].productSlug",
      "body.lines[1].productId"
    ])
  })
  it("distinct products keep line order", () => {
    const lines = [P2, P1, P2].map((productId) => ({ productId, productVariantId: null, quantity: 1 }))
    expect(Orders.distinctProducts({ lines }).map((l) => l.productId)).toEqual([P2, P1])
  })
})

describe("request schemas", () => {
  const decode = Schema.decodeUnknownResult(Orders.OrderCreate)
  it("needs exactly one of customerId and customer, and of productId and productSlug per line", () => {
    expect(Result.isSuccess(decode({ customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }] }))).toBe(
      true
    )
    expect(Result.isFailure(decode({ lines: [{ productSlug: "mug" }] }))).toBe(true)
    expect(
      Result.isFailure(
        decode({ customerId: P1, customer: { email: "a@example.com" }, lines: [{ productSlug: "mug" }] })
      )
    ).toBe(true)
    expect(Result.isFailure(decode({ customerId: P1, lines: [{ productSlug: "mug", productId: P1 }] }))).toBe(true)
    expect(Result.isFailure(decode({ customerId: P1, lines: [] }))).toBe(true)
    expect(Result.isFailure(decode({ customerId: P1, lines: [{ productSlug: "mug", quantity: 1001 }] }))).toBe(true)
    expect(Result.isFailure(decode({ customerId: P1, lines: [{ productSlug: "mug" }], status: "cancelled" }))).toBe(
      true
    )
  })
  it("an import row's times need the status that stamps them", () => {
    const row = Schema.decodeUnknownResult(Orders.OrderImportRow)
    const base = { externalId: "x", customer: "a@example.com", lines: [{ productSlug: "mug" }] }
    expect(Result.isFailure(row({ ...base, fulfilledAt: "2026-01-01T00:00:00Z" }))).toBe(true)
    expect(Result.isFailure(row({ ...base, status: "fulfilled", deliveredAt: "2026-01-01T00:00:00Z" }))).toBe(true)
    expect(
      Result.isSuccess(
        row({ ...base, status: "delivered", fulfilledAt: "2026-01-01T00:00:00Z", deliveredAt: "2026-01-02T00:00:00Z" })
      )
    ).toBe(true)
  })
})
