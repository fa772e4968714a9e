/**
 * Request examples written by hand, for bodies whose rules span fields (exactly one of two fields, a step's kind
 * deciding its other fields, a flow's trigger and condition): an example built from the schema alone satisfies each
 * field but not those rules. Each is one the server accepts (`DocumentExamples.test.ts` sends every example).
 */
const uuid = "0192f5c8-7a1b-7c3d-8e4f-5a6b7c8d9e0f"

export const requestExamples: Readonly<Record<string, unknown>> = {
  "PATCH /survey-flows/{id}": {
    name: "After delivery",
    isActive: true,
    triggerEvent: "order.fulfilled",
    condition: "",
    steps: [
      { type: "wait", position: 1, waitSeconds: 604_800 },
      { type: "email", position: 2, emailTemplateId: uuid }
    ]
  },
  "POST /reviews/import": {
    data: [{
      product: "everyday-ceramic-mug",
      customer: "ada@example.com",
      rating: 5,
      title: "Fits perfectly",
      body: "Comfortable from day one and true to size. Would buy again.",
      published: true,
      createdAt: "2026-03-14T09:26:53.000Z"
    }]
  },
  "POST /orders": {
    externalId: "1042",
    orderNumber: "#1042",
    customerId: uuid,
    lines: [{ productId: uuid, quantity: 1 }],
    status: "fulfilled",
    placedAt: "2026-03-14T09:26:53.000Z"
  },
  "POST /orders/import": {
    data: [{
      externalId: "1042",
      orderNumber: "#1042",
      customer: "ada@example.com",
      firstName: "Ada",
      lastName: "Lovelace",
      lines: [{ productSlug: "everyday-ceramic-mug", quantity: 1 }],
      status: "fulfilled"
    }]
  },
  "POST /storefront/questions": {
    productSlug: "everyday-ceramic-mug",
    body: "Is it dishwasher safe?",
    askerName: "Ada Lovelace",
    askerEmail: "ada@example.com"
  },
  "POST /storefront/reviews": {
    productSlug: "everyday-ceramic-mug",
    rating: 5,
    title: "Fits perfectly",
    body: "Comfortable from day one and true to size. Would buy again.",
    authorName: "Ada L.",
    email: "ada@example.com"
  }
}
