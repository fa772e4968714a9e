/**
 * The server the fuzzer talks to: the real routes behind the in-process fetch handler (`makeWebHandler`) over a
 * given store, with the organizations, keys and records a deep run needs, all made through the API itself.
 * Webhook DNS is a fake and nothing is ever delivered or mailed: the run must not depend on the network.
 */
import { Kernel, type StoreServices, Webhooks } from "@feedback/core"
import { fixedDns } from "@feedback/testing"
import { Layer, Redacted } from "effect"
import { makeWebHandler } from "../../src/server/ApiServer.ts"
import { allPermissions } from "../TestServer.ts"
import { collectionOf, type EndpointShape, responseCollectionOf, samplesOf } from "./ApiShape.ts"
import { type FuzzContext, type FuzzKeys, IdPool, rememberExamples } from "./FuzzRequests.ts"
import { learn, send, type Send, toRequest } from "./FuzzRun.ts"

// Long enough for any start-up check on the operator token (docs/DECISIONS.md §11 asks for at least 32 characters).
const OPERATOR_TOKEN = "fuzz-operator-token-0123456789abcdefghijklmnop"
const HOOK_HOST = "hooks.example.com"

const FakeDns = fixedDns({ [HOOK_HOST]: ["93.184.216.34"] })

export interface FuzzServer {
  readonly handler: Send
  readonly ctx: FuzzContext
  /** Another round of A's records (the run's deletions use them up). */
  readonly reseed: () => Promise<void>
  /** Secret keys and their names, to keep them out of printed reports. */
  readonly keyNames: ReadonlyArray<readonly [string, string]>
  readonly dispose: () => Promise<void>
}

/** A JSON call that must succeed: set-up failing means the harness, not the fuzzed input, is wrong. */
const caller =
  (handler: Send, onBody: (body: unknown) => void = () => {}) =>
  async (method: string, url: string, token: string, body?: unknown): Promise<any> => {
    const answer = await send(
      handler,
      toRequest({
        method,
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" })
        },
        body: body === undefined ? undefined : JSON.stringify(body)
      })
    )
    if (answer.status >= 300) throw new Error(`fuzz set-up: ${method} ${url} → ${answer.status} ${answer.text}`)
    onBody(body)
    return JSON.parse(answer.text)
  }

/** A few of every record organization A or B can own, so ids in paths and bodies name real records. */
const seedRecords = async (call: ReturnType<typeof caller>, key: string, pool: IdPool, tag: string) => {
  // The round's ids join the pool only once the round is complete: fuzz requests running meanwhile must not delete
  // a product the round is still attaching reviews and questions to.
  const created: Array<readonly [string, string]> = []
  const create = async (url: string, body: unknown) => {
    const record = await call("POST", url, key, body)
    created.push([responseCollectionOf(url), record.id])
    return record
  }
  const sites: Array<{ id: string }> = []
  for (let i = 0; i < 2; i++) {
    sites.push(await create("/sites", { name: `${tag} site ${i}`, domain: `shop${i}.${tag}.example.com` }))
  }
  const products: Array<{ id: string; slug: string }> = []
  for (let i = 0; i < 4; i++) products.push(await create("/products", { slug: `${tag}-p${i}`, title: `Product ${i}` }))
  for (let i = 0; i < 4; i++) await create("/customers", { email: `c${i}@${tag}.example.com`, firstName: "Ann" })
  const imported = await call("POST", "/reviews/import", key, {
    data: Array.from({ length: 8 }, (_, i) => ({
      product: products[i % products.length]!.slug,
      site: sites[i % sites.length]!.id,
      customer: `c${i % 4}@${tag}.example.com`,
      rating: 1 + (i % 5),
      title: `Review ${i}`,
      body: `Body of review ${i}`,
      published: i % 2 === 0
    }))
  })
  const reviews: Array<string> = imported.imported.map((row: { id: string }) => row.id)
  for (const id of reviews) created.push(["reviews", id])
  for (const id of reviews.slice(0, 3)) {
    await call("POST", `/reviews/${id}/response`, key, { body: "Thank you", published: true })
  }
  for (let i = 0; i < 3; i++) {
    const question = await create("/product-questions", {
      productId: products[i]!.id,
      body: `Does product ${i} fit?`,
      askerEmail: `asker${i}@${tag}.example.com`
    })
    await call("POST", `/product-questions/${question.id}/answers`, key, { body: "Yes", published: true })
  }
  await create("/webhooks", { url: `https://${HOOK_HOST}/${tag}`, events: [Webhooks.EVENT_NAMES[0]] })
  for (const [collection, id] of created) pool.add(collection, id)
}

const hash = (s: string) => [...s].reduce((h, c) => (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0, 7)

export const makeFuzzServer = async (
  store: Layer.Layer<StoreServices, unknown>,
  endpoints: ReadonlyArray<EndpointShape>,
  seed: number
): Promise<FuzzServer> => {
  const web = makeWebHandler(Layer.merge(store, Kernel.IdGenerator.uuidV7), {
    operatorToken: Redacted.make(OPERATOR_TOKEN),
    webhooks: { dispatcher: false, resolver: FakeDns },
    email: { worker: false }
  })
  const handler: Send = (request) => web.handler(request)
  const call = caller(handler)

  const organization = async (name: string, apiRequestsPerMinute?: number): Promise<string> => {
    const { id } = await call("POST", "/operator/organizations", OPERATOR_TOKEN, { name })
    if (apiRequestsPerMinute !== undefined) {
      await call("PATCH", `/operator/organizations/${id}`, OPERATOR_TOKEN, { apiRequestsPerMinute })
    }
    return id
  }
  const issueKey = (organizationId: string, permissions = allPermissions): Promise<{ id: string; secretKey: string }> =>
    call("POST", `/operator/organizations/${organizationId}/keys`, OPERATOR_TOKEN, { permissions })

  // A and B can spend a whole run without a 429; the low-limit organization makes sure 429s still occur.
  const a = await organization("Fuzz A", 1_000_000)
  // A's storefront buckets too (600 reads a minute and 20 submissions an hour by default would refuse most of a run).
  await call("PATCH", `/operator/organizations/${a}`, OPERATOR_TOKEN, {
    storefrontReadsPerMinute: 1_000_000,
    storefrontSubmissionsPerHour: 1_000_000
  })
  const b = await organization("Fuzz B", 1_000_000)
  const low = await organization("Fuzz low limit", 60)
  const c = await organization("Fuzz operator target")
  const revoked = await issueKey(a)
  await call("DELETE", `/operator/organizations/${a}/keys/${revoked.id}`, OPERATOR_TOKEN)
  const keys: FuzzKeys = {
    full: (await issueKey(a)).secretKey,
    readOnly: (await issueKey(a, ["reviews:read", "settings:read"])).secretKey,
    revoked: revoked.secretKey,
    lowLimit: (await issueKey(low)).secretKey,
    operator: OPERATOR_TOKEN,
    publishable: (await call("POST", `/operator/organizations/${a}/publishable-keys`, OPERATOR_TOKEN)).key,
    revokedPublishable: await (async () => {
      const key = await call("POST", `/operator/organizations/${a}/publishable-keys`, OPERATOR_TOKEN)
      await call("DELETE", `/publishable-keys/${key.id}`, await issueKey(a).then((k) => k.secretKey))
      return key.key
    })()
  }
  const otherKey = (await issueKey(b)).secretKey

  const memo = new Map<string, ReadonlyArray<unknown>>()
  const ctx: FuzzContext = {
    keys,
    own: new IdPool(),
    other: new IdPool(),
    operatorOwn: new IdPool(),
    cursors: new Map(),
    examples: new Map(),
    samples: (endpoint, slot) => {
      const id = `${endpoint.name} ${slot}`
      const schema = endpoint[slot]
      if (!memo.has(id)) memo.set(id, schema === undefined ? [{}] : samplesOf(schema, (seed ^ hash(id)) >>> 0))
      return memo.get(id)!
    }
  }
  // The operator may touch any organization: it gets C (and C's keys), never A, whose rate limit the run relies on.
  ctx.operatorOwn.add("organizations", c)
  for (let i = 0; i < 3; i++) ctx.operatorOwn.add("keys", (await issueKey(c)).id)
  // Only A's set-up bodies become examples: B's would put B's ids into A's generated bodies on purpose too often.
  const callAsA = caller(handler, (body) => rememberExamples(ctx.examples, body))
  let round = 0
  const reseed = () => seedRecords(callAsA, keys.full, ctx.own, `a${round++}`)
  await reseed()
  // A shopper's review, so generated submissions learn its fields (authorName, productSlug, fingerprint…).
  await callAsA("POST", `/storefront/reviews?apiPublishableKey=${keys.publishable}`, "", {
    productSlug: "a0-p0",
    rating: 4,
    title: "Sturdy",
    authorName: "Ann Shopper",
    email: "shopper@a.example.com",
    fingerprint: "fp-fuzz",
    formRenderedAt: new Date(Date.now() - 60_000).toISOString()
  })
  // Surveys with real tokens (the guided setup's flow asks after every fulfilled order), so the survey routes are
  // reached with valid tokens too; one submission teaches generated bodies its shape.
  await callAsA("POST", "/organization/setup/reviews", keys.full, { data: { delayDays: 7, reminder: true } })
  const surveyed: Array<{ id: string }> = (await call("GET", "/products?limit=2", keys.full)).data
  const tokens: Array<string> = []
  for (let i = 0; i < 4; i++) {
    const order = await callAsA("POST", "/orders", keys.full, {
      customer: { email: `buyer${i}@a.example.com`, firstName: "Bea" },
      lines: surveyed.map((p) => ({ productId: p.id })),
      status: "fulfilled"
    })
    const filter = encodeURIComponent(JSON.stringify({ "order.id": order.id }))
    const [survey] = (await call("GET", `/surveys?filter=${filter}`, keys.full)).data
    tokens.push(survey.url.split("/r/")[1])
  }
  await callAsA("POST", `/storefront/surveys/${tokens[0]}/reviews?apiPublishableKey=${keys.publishable}`, "", {
    reviews: [{ productId: surveyed[0]!.id, rating: 5, title: "Fits", body: "Good." }]
  })
  for (const token of tokens) ctx.own.add(collectionOf("/storefront/surveys/:token", "token"), token)
  await seedRecords(call, otherKey, ctx.other, "b")

  // A first page of every list, so real cursors exist to replay and to tamper with.
  for (const endpoint of endpoints) {
    const fields = (endpoint.query as { fields?: Record<string, unknown> } | undefined)?.fields ?? {}
    if (
      endpoint.method !== "GET" || endpoint.auth !== "secretKey" || endpoint.pathParams.length > 0 ||
      !("limit" in fields)
    ) continue
    const request = {
      index: -1,
      endpoint,
      method: "GET",
      url: `${endpoint.path}?limit=1`,
      headers: { authorization: `Bearer ${keys.full}` },
      body: undefined,
      labels: [],
      pathIds: [],
      crossOrganization: false,
      lowerCaseTwin: undefined
    }
    learn(ctx, request, await send(handler, toRequest(request)))
  }

  return {
    handler,
    ctx,
    reseed,
    keyNames: [
      [keys.full, "A's key"],
      [keys.readOnly, "A's read-only key"],
      [keys.revoked, "A's revoked key"],
      [keys.lowLimit, "low-limit org's key"],
      [OPERATOR_TOKEN, "operator token"],
      [otherKey, "B's key"]
    ],
    dispose: () => web.dispose()
  }
}
