/**
 * Every request example in the served OpenAPI document is accepted by the server (docs/DECISIONS.md §21): each
 * operation's JSON body example is sent as it stands, its path parameters naming real records of the organization,
 * an id inside one naming the organization's record of its kind. The answer is a 2xx, or a 404, 409 or 422: the
 * example read and found at odds with what the organization holds (a slug already taken, a setup already done),
 * never refused as malformed. The examples come from the document, so a new operation is covered once it has a body.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { operationsOf } from "./openapi/DocumentConformance.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"
import { type Receiver, startReceiver } from "./WebhookReceiver.ts"

type Json = Record<string, any>

/** Answers about the organization's records, not about the request's shape. */
const stateful = new Set([404, 409, 422])

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s)

describe("every request example in the document", () => {
  let server: TestServer
  let receiver: Receiver
  let document: Json
  beforeAll(async () => {
    receiver = await startReceiver()
    server = makeTestServer(undefined, {
      // The examples' webhook URL is a public-looking host: resolve nothing, and let the check stop at its shape.
      webhooks: { allowInsecure: true, allowPrivate: true, timeoutMs: 2_000 }
    })
    document = (await server.request("GET", "/openapi.json")).body
  })
  afterAll(async () => {
    await server.dispose()
    await receiver.close()
  })

  it("is accepted by the server: a 2xx, or an answer about the organization's state", async () => {
    const { key } = await server.provision()
    const call = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
      const res = await server.request(method, path, {
        token: key,
        ...(body === undefined ? {} : { body }),
        ...(headers === undefined ? {} : { headers })
      })
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`)
      return res.body
    }
    // The records path parameters name, made the plain way.
    const site = await call("POST", "/sites", { name: "Main", domain: "main.example.com" })
    const product = await call("POST", "/products", { slug: "mug", title: "Mug" })
    const customer = await call("POST", "/customers", { email: "grace@example.com" })
    const order = await call("POST", "/orders", {
      externalId: "o-1",
      customerId: customer.id,
      lines: [{ productId: product.id }]
    })
    const imported = await call("POST", "/reviews/import", {
      data: [{ product: "mug", rating: 5, body: "Lovely.", customer: "grace@example.com" }]
    })
    const question = await call("POST", "/product-questions", { productId: product.id, body: "Safe?", published: true })
    const answer = await call("POST", `/product-questions/${question.id}/answers`, { body: "Yes." })
    const webhook = await call("POST", "/webhooks", { url: receiver.url("/ok"), events: ["review.created"] })
    const delivery = await call("POST", `/webhooks/${webhook.id}/ping`)
    await call("POST", "/organization/setup/reviews", { data: {} })
    const template = (await call("GET", "/email-templates")).data[0]
    const flow = (await call("GET", "/survey-flows")).data[0]
    const survey = await call("POST", "/surveys", { orderId: order.id })
    const publishable = await call("POST", "/publishable-keys")
    const exportJob = await call("POST", "/export-jobs", { type: "reviews", format: "ndjson" })
    const records: Record<string, string> = {
      sites: site.id,
      products: product.id,
      customers: customer.id,
      orders: order.id,
      reviews: imported.imported[0].id,
      "product-questions": question.id,
      "storefront/questions": question.id,
      answerId: answer.id,
      webhooks: webhook.id,
      deliveryId: delivery.id,
      "email-templates": template.id,
      "survey-flows": flow.id,
      surveys: survey.id,
      "publishable-keys": publishable.id,
      "export-jobs": exportJob.id
    }
    // The examples' ids name one sample record; sent, each names the organization's record of its kind.
    const byField: Record<string, string> = {
      orderId: order.id,
      productId: product.id,
      customerId: customer.id,
      siteId: site.id,
      flowId: flow.id,
      emailTemplateId: template.id
    }
    const withRecords = (value: unknown, field?: string): unknown =>
      Array.isArray(value)
        ? value.map((item) => withRecords(item, field))
        : typeof value === "object" && value !== null
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withRecords(v, k)]))
        : typeof value === "string" && field !== undefined && byField[field] !== undefined && isUuid(value)
        ? byField[field]
        : value
    const pathOf = (template: string) =>
      template.replace(/\{(\w+)\}/g, (_, name: string, at: number) => {
        const collection = template.slice(1, at - 1)
        const id = records[name] ?? records[collection] ?? records[collection.split("/").pop()!]
        if (id === undefined) throw new Error(`no record for {${name}} in ${template}`)
        return id
      })

    // Deletions last, so every other example finds its records.
    const withBodies = operationsOf(document)
      .map(({ key, operation }) => ({ key, example: operation.requestBody?.content?.["application/json"]?.example }))
      .filter(({ example }) => example !== undefined)
      .sort((a, b) => Number(a.key.startsWith("DELETE")) - Number(b.key.startsWith("DELETE")))
    expect(withBodies.length).toBeGreaterThan(20)
    const refused: Array<string> = []
    for (const { example, key: operation } of withBodies) {
      const [method, template] = operation.split(" ") as [string, string]
      const storefront = template.startsWith("/storefront/")
      const res = await server.request(method, pathOf(template), {
        token: storefront ? undefined : key,
        body: withRecords(example),
        ...(storefront ? { headers: { "x-publishable-key": publishable.key } } : {})
      })
      if (!(res.status < 300 || stateful.has(res.status))) refused.push(`${operation} ${res.status}: ${res.text}`)
    }
    expect(refused).toEqual([])
  }, 60_000)
})
