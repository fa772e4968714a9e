/**
 * Proof that the served OpenAPI document is honest (docs/DECISIONS.md §21): the fetch client generated from it with
 * `openapi-typescript` + `openapi-fetch` calls EVERY operation of a running server (memory store), and each answer
 * is checked against the document: a listed status, a body valid against the documented schema, the required
 * headers. The operations come from the document itself, so an endpoint added without a call here fails the test.
 *
 * To cover a new endpoint, add its call to `calls` (in an order where what it needs already exists).
 */
import { type AdminApiClient, createAdminApiClient } from "@feedback/client"
import { Storefront } from "@feedback/core"
import { readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fetchTypesSource } from "../../client/scripts/FetchTypes.ts"
import { makeConformance, operationsOf } from "./openapi/DocumentConformance.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { type Receiver, startReceiver } from "./WebhookReceiver.ts"

/** What the calls made so far created, for the calls after them. */
interface Made {
  [name: string]: string
}

interface Answer {
  readonly data?: unknown
  readonly error?: unknown
  readonly response: Response
}

interface Context {
  readonly api: AdminApiClient
  readonly made: Made
  readonly receiverUrl: string
}

const id = (made: Made, name: string): string => {
  const value = made[name]
  if (value === undefined) throw new Error(`no ${name} yet: order the calls so the one creating it runs first`)
  return value
}

/** The query of a signed customer call for `email` (docs/STOREFRONT.md). */
const signedFor = (made: Made, email: string) => {
  const timestamp = String(Math.floor(Date.now() / 1_000))
  const key = id(made, "publishableKeyText")
  return {
    apiPublishableKey: key,
    customerEmail: email,
    timestamp,
    signature: Storefront.signCustomer(id(made, "signingSecret"), key, email, timestamp)
  }
}

/**
 * One call per operation, keyed as `METHOD /path` in the document; run in this order. A call may return what it
 * created (`made`) for later calls.
 */
const calls: Record<string, (ctx: Context) => Promise<Answer & { readonly made?: Made }>> = {
  "GET /health": ({ api }) => api.GET("/health"),
  "GET /ready": ({ api }) => api.GET("/ready"),
  "GET /organization": ({ api }) => api.GET("/organization"),

  "POST /publishable-keys": async ({ api }) => {
    const answer = await api.POST("/publishable-keys")
    return {
      ...answer,
      made: {
        publishableKey: answer.data!.id,
        publishableKeyText: answer.data!.key,
        signingSecret: answer.data!.signingSecret
      }
    }
  },
  "GET /publishable-keys": ({ api }) => api.GET("/publishable-keys"),

  "POST /sites": async ({ api }) => {
    const answer = await api.POST("/sites", { body: { name: "Main store", domain: "shop.example.com" } })
    return { ...answer, made: { site: answer.data!.id } }
  },
  "GET /sites": ({ api }) => api.GET("/sites", { params: { query: { limit: 10, sort: "-createdAt" } } }),
  "GET /sites/{id}": ({ api, made }) => api.GET("/sites/{id}", { params: { path: { id: id(made, "site") } } }),

  "POST /products": async ({ api }) => {
    const answer = await api.POST("/products", { body: { slug: "mug", title: "Everyday mug", externalId: "sku-1" } })
    return { ...answer, made: { product: answer.data!.id } }
  },
  "POST /products/import": async ({ api }) => {
    const answer = await api.POST("/products/import", {
      body: { data: [{ slug: "cup", title: "Cup", externalId: "sku-2" }] }
    })
    return { ...answer, made: { spareProduct: answer.data!.imported[0]!.id } }
  },
  "GET /products": ({ api }) => api.GET("/products", { params: { query: { limit: 10, search: "mug" } } }),
  "GET /products/{id}": ({ api, made }) => api.GET("/products/{id}", { params: { path: { id: id(made, "product") } } }),
  "PATCH /products/{id}": ({ api, made }) =>
    api.PATCH("/products/{id}", {
      params: { path: { id: id(made, "product") } },
      body: { title: "Everyday ceramic mug" }
    }),
  "DELETE /products/{id}": ({ api, made }) =>
    api.DELETE("/products/{id}", { params: { path: { id: id(made, "spareProduct") } } }),

  "POST /customers": async ({ api }) => {
    const answer = await api.POST("/customers", { body: { email: "ada@example.com", firstName: "Ada" } })
    return { ...answer, made: { customer: answer.data!.id } }
  },
  "POST /customers/import": ({ api }) =>
    api.POST("/customers/import", { body: { data: [{ email: "grace@example.com" }] } }),
  "GET /customers": ({ api }) =>
    api.GET("/customers", { params: { query: { filter: JSON.stringify({ email: "ada@example.com" }) } } }),
  "GET /customers/{id}": ({ api, made }) =>
    api.GET("/customers/{id}", { params: { path: { id: id(made, "customer") } } }),

  "POST /orders": async ({ api, made }) => {
    const answer = await api.POST("/orders", {
      body: {
        externalId: "ord-1",
        orderNumber: "#1001",
        customerId: id(made, "customer"),
        lines: [{ productId: id(made, "product"), quantity: 2 }]
      }
    })
    return { ...answer, made: { order: answer.data!.id } }
  },
  "POST /orders/import": async ({ api }) => {
    const answer = await api.POST("/orders/import", {
      body: {
        data: [{
          externalId: "ord-0",
          customer: "grace@example.com",
          lines: [{ productSlug: "mug" }],
          status: "delivered"
        }]
      }
    })
    return { ...answer, made: { spareOrder: answer.data!.imported[0]!.id } }
  },
  "GET /orders": ({ api }) =>
    api.GET("/orders", {
      params: { query: { sort: "-updatedAt", filter: JSON.stringify({ updatedAt: { $gte: "2020-01-01T00:00:00Z" } }) } }
    }),
  "GET /orders/{id}": ({ api, made }) => api.GET("/orders/{id}", { params: { path: { id: id(made, "order") } } }),
  "PATCH /orders/{id}": ({ api, made }) =>
    api.PATCH("/orders/{id}", {
      params: { path: { id: id(made, "order") } },
      body: { status: "fulfilled", metadata: { carrier: "post" } }
    }),
  "PATCH /orders/bulk-update": ({ api }) =>
    api.PATCH("/orders/bulk-update", { params: { query: { search: "#1001" } }, body: { status: "delivered" } }),
  "DELETE /orders/{id}": ({ api, made }) =>
    api.DELETE("/orders/{id}", { params: { path: { id: id(made, "spareOrder") } } }),

  "GET /organization/setup": ({ api }) => api.GET("/organization/setup"),
  "PATCH /organization/setup": ({ api }) =>
    api.PATCH("/organization/setup", { body: { area: "loyalty", outcome: "dismissed" } }),
  "POST /organization/setup/reviews": ({ api }) => api.POST("/organization/setup/reviews", { body: { data: {} } }),
  "GET /review-settings": ({ api }) => api.GET("/review-settings"),
  "PATCH /review-settings": ({ api }) =>
    api.PATCH("/review-settings", { body: { autoPublish: true, autoPublishMinRating: 5 } }),

  // The guided setup's flow is the newest active one: a manual request goes through it.
  "POST /surveys": async ({ api, made }) => {
    const answer = await api.POST("/surveys", { body: { orderId: id(made, "order") } })
    return { ...answer, made: { survey: answer.data!.id, surveyToken: answer.data!.url.split("/r/")[1]! } }
  },
  "GET /surveys": ({ api, made }) =>
    api.GET("/surveys", {
      params: { query: { filter: JSON.stringify({ "order.id": id(made, "order") }), sort: "-updatedAt" } }
    }),
  "GET /surveys/{id}": ({ api, made }) => api.GET("/surveys/{id}", { params: { path: { id: id(made, "survey") } } }),
  "GET /storefront/surveys/{token}": ({ api, made }) =>
    api.GET("/storefront/surveys/{token}", {
      params: { path: { token: id(made, "surveyToken") } },
      headers: { "x-publishable-key": id(made, "publishableKeyText") }
    }),
  "POST /storefront/surveys/{token}/reviews": ({ api, made }) =>
    api.POST("/storefront/surveys/{token}/reviews", {
      params: { path: { token: id(made, "surveyToken") } },
      headers: { "x-publishable-key": id(made, "publishableKeyText") },
      body: { reviews: [{ productId: id(made, "product"), rating: 5, title: "Keeps tea warm", body: "Lovely." }] }
    }),
  "DELETE /surveys/{id}": ({ api, made }) =>
    api.DELETE("/surveys/{id}", { params: { path: { id: id(made, "survey") } } }),

  "GET /email-templates": async ({ api }) => {
    const answer = await api.GET("/email-templates", { params: { query: { limit: 10 } } })
    return { ...answer, made: { template: answer.data!.data[0]!.id } }
  },
  "GET /email-templates/{id}": ({ api, made }) =>
    api.GET("/email-templates/{id}", { params: { path: { id: id(made, "template") } } }),
  "PATCH /email-templates/{id}": ({ api, made }) =>
    api.PATCH("/email-templates/{id}", {
      params: { path: { id: id(made, "template") } },
      body: { subject: "How was your order?" }
    }),
  "GET /survey-flows": async ({ api }) => {
    const answer = await api.GET("/survey-flows")
    return { ...answer, made: { flow: answer.data!.data[0]!.id } }
  },
  "GET /survey-flows/{id}": ({ api, made }) =>
    api.GET("/survey-flows/{id}", { params: { path: { id: id(made, "flow") } } }),
  "PATCH /survey-flows/{id}": ({ api, made }) =>
    api.PATCH("/survey-flows/{id}", { params: { path: { id: id(made, "flow") } }, body: { name: "After delivery" } }),
  "DELETE /survey-flows/{id}": ({ api, made }) =>
    api.DELETE("/survey-flows/{id}", { params: { path: { id: id(made, "flow") } } }),
  // After its flow is gone: a template a flow still sends is a 409.
  "DELETE /email-templates/{id}": async ({ api }) => {
    const all = await api.GET("/email-templates", { params: { query: { limit: 250 } } })
    const flows = await api.GET("/survey-flows", { params: { query: { limit: 250 } } })
    const used = new Set(flows.data!.data.flatMap((flow) => flow.steps.map((step) => step.emailTemplateId)))
    const free = all.data!.data.find((template) => !used.has(template.id))!
    return api.DELETE("/email-templates/{id}", { params: { path: { id: free.id } } })
  },

  "POST /reviews/import": async ({ api }) => {
    const answer = await api.POST("/reviews/import", {
      body: {
        data: [{ product: "mug", rating: 5, title: "Fits perfectly", body: "Lovely mug.", customer: "ada@example.com" }]
      }
    })
    return { ...answer, made: { review: answer.data!.imported[0]!.id } }
  },
  "POST /import-jobs": async ({ api }) => {
    const answer = await api.POST("/import-jobs", {
      params: { query: { type: "products" } },
      body: "{\"slug\":\"lamp\",\"title\":\"Desk lamp\"}\n",
      headers: { "content-type": "application/x-ndjson" },
      bodySerializer: (body: string) => body
    })
    return { ...answer, made: { importJob: answer.data!.id } }
  },
  "GET /import-jobs/{id}": ({ api, made }) =>
    api.GET("/import-jobs/{id}", { params: { path: { id: id(made, "importJob") } } }),
  "POST /export-jobs": async ({ api }) => {
    const answer = await api.POST("/export-jobs", { body: { type: "reviews", format: "ndjson", search: "mug" } })
    return { ...answer, made: { exportJob: answer.data!.id } }
  },
  "GET /export-jobs/{id}": async ({ api, made }) => {
    // Read until the background worker has run it: the download below needs the file.
    for (let i = 0; i < 100; i++) {
      const answer = await api.GET("/export-jobs/{id}", { params: { path: { id: id(made, "exportJob") } } })
      if (answer.data?.status !== "queued" && answer.data?.status !== "running") return answer
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error("the export job did not finish in 10 s")
  },
  "GET /export-jobs/{id}/download": ({ api, made }) =>
    api.GET("/export-jobs/{id}/download", { params: { path: { id: id(made, "exportJob") } }, parseAs: "text" }),
  "GET /reviews": ({ api }) =>
    api.GET("/reviews", { params: { query: { include: ["product", "customer"], sort: "-rating" } } }),
  "GET /reviews/{id}": ({ api, made }) =>
    api.GET("/reviews/{id}", {
      params: { path: { id: id(made, "review") }, query: { include: ["files", "collisions"] } }
    }),
  "PATCH /reviews/{id}": ({ api, made }) =>
    api.PATCH("/reviews/{id}", { params: { path: { id: id(made, "review") } }, body: { published: true } }),
  "PATCH /reviews/bulk-update": ({ api }) =>
    api.PATCH("/reviews/bulk-update", { params: { query: { search: "mug" } }, body: { published: true } }),
  "POST /reviews/{id}/response": ({ api, made }) =>
    api.POST("/reviews/{id}/response", { params: { path: { id: id(made, "review") } }, body: { body: "Thank you!" } }),
  "PATCH /reviews/{id}/response": ({ api, made }) =>
    api.PATCH("/reviews/{id}/response", { params: { path: { id: id(made, "review") } }, body: { published: true } }),
  "DELETE /reviews/{id}/response": ({ api, made }) =>
    api.DELETE("/reviews/{id}/response", { params: { path: { id: id(made, "review") } } }),
  "DELETE /reviews/{id}": ({ api, made }) =>
    api.DELETE("/reviews/{id}", { params: { path: { id: id(made, "review") } }, body: { reason: "test_data" } }),

  "POST /product-questions": async ({ api, made }) => {
    const answer = await api.POST("/product-questions", {
      body: { productId: id(made, "product"), body: "Is it dishwasher safe?", askerName: "Ada" }
    })
    return { ...answer, made: { question: answer.data!.id } }
  },
  "GET /product-questions": ({ api }) =>
    api.GET("/product-questions", { params: { query: { answered: false, include: ["product"] } } }),
  "GET /product-questions/{id}": ({ api, made }) =>
    api.GET("/product-questions/{id}", {
      params: { path: { id: id(made, "question") }, query: { include: ["answers"] } }
    }),
  "PATCH /product-questions/{id}": ({ api, made }) =>
    api.PATCH("/product-questions/{id}", { params: { path: { id: id(made, "question") } }, body: { published: true } }),
  "POST /product-questions/{id}/answers": async ({ api, made }) => {
    const answer = await api.POST("/product-questions/{id}/answers", {
      params: { path: { id: id(made, "question") } },
      body: { body: "Yes, it is." }
    })
    return { ...answer, made: { answer: answer.data!.id } }
  },
  "GET /product-questions/{id}/answers": ({ api, made }) =>
    api.GET("/product-questions/{id}/answers", { params: { path: { id: id(made, "question") } } }),
  "PATCH /product-questions/{id}/answers/{answerId}": ({ api, made }) =>
    api.PATCH("/product-questions/{id}/answers/{answerId}", {
      params: { path: { id: id(made, "question"), answerId: id(made, "answer") } },
      body: { published: false }
    }),
  "DELETE /product-questions/{id}/answers/{answerId}": ({ api, made }) =>
    api.DELETE("/product-questions/{id}/answers/{answerId}", {
      params: { path: { id: id(made, "question"), answerId: id(made, "answer") } }
    }),
  "DELETE /product-questions/{id}": ({ api, made }) =>
    api.DELETE("/product-questions/{id}", { params: { path: { id: id(made, "question") } } }),

  "GET /webhook-events": ({ api }) => api.GET("/webhook-events"),
  "POST /webhooks": async ({ api, receiverUrl }) => {
    const answer = await api.POST("/webhooks", { body: { url: receiverUrl, events: ["product.updated"] } })
    return { ...answer, made: { webhook: answer.data!.id } }
  },
  "GET /webhooks": ({ api }) => api.GET("/webhooks", { params: { query: { limit: 5 } } }),
  "GET /webhooks/{id}": ({ api, made }) => api.GET("/webhooks/{id}", { params: { path: { id: id(made, "webhook") } } }),
  "PATCH /webhooks/{id}": ({ api, made }) =>
    api.PATCH("/webhooks/{id}", {
      params: { path: { id: id(made, "webhook") } },
      body: { events: ["product.updated", "review.created"], hmacSecret: "whsec_first_secret_0123456789" }
    }),
  "POST /webhooks/{id}/rotate-secret": ({ api, made }) =>
    api.POST("/webhooks/{id}/rotate-secret", {
      params: { path: { id: id(made, "webhook") } },
      body: { hmacSecret: "whsec_second_secret_0123456789", overlapSeconds: 60 }
    }),
  "POST /webhooks/{id}/ping": async ({ api, made }) => {
    const answer = await api.POST("/webhooks/{id}/ping", { params: { path: { id: id(made, "webhook") } } })
    return { ...answer, made: { delivery: answer.data!.id } }
  },
  "GET /webhooks/{id}/events": ({ api, made }) =>
    api.GET("/webhooks/{id}/events", { params: { path: { id: id(made, "webhook") } } }),
  "POST /webhooks/{id}/events/{deliveryId}/redeliver": ({ api, made }) =>
    api.POST("/webhooks/{id}/events/{deliveryId}/redeliver", {
      params: { path: { id: id(made, "webhook"), deliveryId: id(made, "delivery") } }
    }),
  "GET /events": ({ api }) =>
    api.GET("/events", { params: { query: { events: ["product.updated", "review.created"], limit: 50 } } }),
  "DELETE /webhooks/{id}": ({ api, made }) =>
    api.DELETE("/webhooks/{id}", { params: { path: { id: id(made, "webhook") } } }),
  "GET /storefront/ratings": ({ api, made }) =>
    api.GET("/storefront/ratings", {
      params: { query: { products: "mug,cup", apiPublishableKey: id(made, "publishableKeyText") } }
    }),
  "GET /storefront/products/{productIdOrSlug}/reviews": ({ api, made }) =>
    api.GET("/storefront/products/{productIdOrSlug}/reviews", {
      params: { path: { productIdOrSlug: "mug" }, query: { limit: 5, sort: "-rating", rating: 5 } },
      headers: { "x-publishable-key": id(made, "publishableKeyText") }
    }),
  "GET /storefront/products/{productIdOrSlug}/questions": ({ api, made }) =>
    api.GET("/storefront/products/{productIdOrSlug}/questions", {
      params: { path: { productIdOrSlug: id(made, "product") }, query: { limit: 5 } },
      headers: { "x-publishable-key": id(made, "publishableKeyText") }
    }),
  "POST /storefront/questions": ({ api, made }) =>
    api.POST("/storefront/questions", {
      params: { query: { apiPublishableKey: id(made, "publishableKeyText") } },
      body: { productSlug: "mug", body: "Does it keep tea warm?", askerName: "Grace", askerEmail: "grace@example.com" }
    }),
  "POST /storefront/questions/{id}/answers": async ({ api, made }) => {
    const question = await api.POST("/product-questions", {
      body: { productId: id(made, "product"), body: "Is it microwave safe?", published: true }
    })
    return api.POST("/storefront/questions/{id}/answers", {
      params: { path: { id: question.data!.id }, query: { apiPublishableKey: id(made, "publishableKeyText") } },
      body: { body: "Mine is, yes.", authorName: "Alan" }
    })
  },
  "POST /storefront/reviews": ({ api, made }) =>
    api.POST("/storefront/reviews", {
      params: { query: signedFor(made, "ada@example.com") },
      body: { productSlug: "mug", rating: 4, title: "Nice", authorName: "Ada Lovelace", fingerprint: "fp-1" }
    }),
  "GET /storefront/customer/reviews": ({ api, made }) =>
    api.GET("/storefront/customer/reviews", { params: { query: { ...signedFor(made, "ada@example.com"), limit: 5 } } }),
  "DELETE /publishable-keys/{id}": ({ api, made }) =>
    api.DELETE("/publishable-keys/{id}", { params: { path: { id: id(made, "publishableKey") } } })
}

describe("a client generated from the served document calls every operation", () => {
  let server: TestServer
  let receiver: Receiver
  let document: Record<string, any>
  beforeAll(async () => {
    receiver = await startReceiver()
    server = makeTestServer(undefined, {
      webhooks: {
        allowInsecure: true,
        allowPrivate: true,
        timeoutMs: 2_000,
        dispatcher: { pollIntervalMs: 20, heartbeatIntervalMs: 200, leaseMs: 1_000 }
      }
    })
    document = (await server.request("GET", "/openapi.json")).body
  })
  afterAll(async () => {
    await server.dispose()
    await receiver.close()
  })

  it("the client's types are generated from the served document (openapi-typescript)", async () => {
    const checkedIn = readFileSync(new URL("../../client/src/fetch/AdminApiPaths.ts", import.meta.url), "utf8")
    // A failure here: run `npm run generate:client` and commit the result.
    expect(checkedIn).toBe(await fetchTypesSource(document))
  })

  it("has a call for every documented operation, and no call for an undocumented one", () => {
    const documented = operationsOf(document).map((op) => op.key).sort()
    expect(Object.keys(calls).sort()).toEqual(documented)
  })

  it("every example in the document validates against its schema, and every body has one", () => {
    const { exampleProblems } = makeConformance(document)
    expect(exampleProblems()).toEqual([])
    const missing = operationsOf(document).flatMap(({ key, operation }) => {
      const media = [
        ["request", operation.requestBody?.content?.["application/json"]],
        ...Object.entries<any>(operation.responses).map(([status, response]) => {
          const resolved = response.$ref === undefined
            ? response
            : document.components.responses[response.$ref.split("/").pop()]
          return [status, resolved.content?.["application/json"]]
        })
      ] as const
      return media.filter(([, m]) => m !== undefined && m.example === undefined).map(([where]) => `${key} ${where}`)
    })
    expect(missing).toEqual([])
  })

  it("each answer has a documented status, a body valid against its schema and the required headers", async () => {
    const { key } = await server.provision()
    const api = createAdminApiClient({
      baseUrl: "http://test",
      secretKey: key,
      fetch: (request) => server.fetch(request)
    })
    const { problemsOf } = makeConformance(document)
    const made: Made = {}
    const problems: Array<string> = []
    for (const [operation, call] of Object.entries(calls)) {
      const answer = await call({ api, made, receiverUrl: receiver.url("/ok") })
      Object.assign(made, answer.made)
      const body = answer.data ?? answer.error
      // Each call is made to succeed, so every success schema is exercised; errors are documented the same way.
      if (!answer.response.ok) problems.push(`${operation} answered ${answer.response.status}: ${JSON.stringify(body)}`)
      problems.push(
        ...problemsOf(operation, { status: answer.response.status, headers: answer.response.headers, body })
      )
    }
    expect(problems).toEqual([])
  })

  it("error answers conform too: 401, 404, 400", async () => {
    const { problemsOf } = makeConformance(document)
    const anonymous = createAdminApiClient({
      baseUrl: "http://test",
      secretKey: "sk_unknown",
      fetch: (request) => server.fetch(request)
    })
    const unauthorized = await anonymous.GET("/organization")
    expect(unauthorized.response.status).toBe(401)
    expect(
      problemsOf("GET /organization", { status: 401, headers: unauthorized.response.headers, body: unauthorized.error })
    ).toEqual([])
    const { key } = await server.provision()
    const api = createAdminApiClient({
      baseUrl: "http://test",
      secretKey: key,
      fetch: (request) => server.fetch(request)
    })
    const missing = await api.GET("/reviews/{id}", { params: { path: { id: "00000000-0000-4000-8000-000000000000" } } })
    expect(missing.response.status).toBe(404)
    expect(problemsOf("GET /reviews/{id}", { status: 404, headers: missing.response.headers, body: missing.error }))
      .toEqual([])
    const invalid = await api.POST("/products", { body: { slug: "", title: "" } })
    expect(invalid.response.status).toBe(400)
    expect(problemsOf("POST /products", { status: 400, headers: invalid.response.headers, body: invalid.error }))
      .toEqual([])
  })
})
