/**
 * Product questions over HTTP, end to end: the real routes, middleware and error envelope over the memory store,
 * and the email notice worker sending through nodemailer to a real SMTP server (`smtp-server`) on loopback.
 *
 * Products and customers are seeded through the store's test kit (their endpoints live on another branch);
 * the store's context is shared by the test server, the seeding, the checks of stored rows and the worker.
 */
import { Kernel, Questions, type StoreServices } from "@feedback/core"
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { MemoryStoreTestKit } from "@feedback/adapter-memory/testing"
import { seedCustomer, seedProduct, StoreTestKit } from "@feedback/testing"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { classifySmtpError, EmailNoticeWorkerLive, type SmtpSettings } from "../src/server/questions/SmtpMailer.ts"
import { expectError, issuePaths } from "./Http.ts"
import { type ReceivedMessage, type SmtpReceiver, startSmtpReceiver } from "./SmtpReceiver.ts"
import { makeTestServer, type TestResponse } from "./TestServer.ts"
import { eventually } from "./WebhookReceiver.ts"

// ---------------------------------------------------------------------------------------------------------------
// One memory store shared by the HTTP server, the seeding and the checks

const StoreWithSupport = MemoryStoreTestKit.pipe(
  Layer.provideMerge(MemoryStoreLayer),
  Layer.provideMerge(Kernel.IdGenerator.uuidV7)
)
const store = ManagedRuntime.make(StoreWithSupport)
let server: ReturnType<typeof makeTestServer>

beforeAll(async () => {
  const context = await store.context()
  // The email workers of these tests are started by the tests themselves.
  server = makeTestServer(Layer.succeedContext(context) as Layer.Layer<StoreServices>, { email: { worker: false } })
})
afterAll(async () => {
  await server.dispose()
  await store.dispose()
})

const run = <A>(effect: Effect.Effect<A, never, Layer.Success<typeof StoreWithSupport>>) => store.runPromise(effect)

interface Shop {
  readonly organizationId: Kernel.OrganizationId
  readonly key: string
  readonly productId: string
  readonly req: (method: string, path: string, body?: unknown) => Promise<TestResponse>
}

const shop = async (
  options: { readonly permissions?: ReadonlyArray<"reviews:read" | "reviews:write"> } = {}
): Promise<Shop> => {
  const { organizationId, key } = await server.provision(
    options.permissions === undefined ? {} : { permissions: options.permissions }
  )
  const product = await run(
    seedProduct(organizationId as Kernel.OrganizationId, { title: "Ceramic mug", slug: `mug-${organizationId}` })
  )
  return {
    organizationId: organizationId as Kernel.OrganizationId,
    key,
    productId: product.id,
    req: (method, path, body) => server.request(method, path, { token: key, ...(body === undefined ? {} : { body }) })
  }
}

const eventsOf = (organizationId: Kernel.OrganizationId) =>
  run(Kernel.EventOutbox.use((o) => o.listForOrganization(organizationId))).then((es) => es.map((e) => e.event))
const noticesOf = (organizationId: Kernel.OrganizationId) =>
  run(Questions.EmailOutboxRepository.use((o) => o.listForOrganization(organizationId)))
const tablesContaining = (needle: string) => run(StoreTestKit.use((s) => s.tablesContaining(needle)))

/** Polls `probe` (every 20 ms, for at most 5 s) until it gives a value. */
const waitFor = <A>(what: string, probe: () => Promise<A | undefined> | A | undefined): Promise<A> =>
  eventually(async () => probe(), 5_000, what)

// ---------------------------------------------------------------------------------------------------------------

describe("recording and moderating questions", () => {
  it("a question posted without `published` is unpublished and listed; PATCH publishes it and fires productQuestion.updated; its text cannot change", async () => {
    const s = await shop()
    const created = await s.req("POST", "/product-questions", {
      productId: s.productId,
      body: "Is it dishwasher safe?",
      askerName: "Ada",
      askerEmail: "ada@example.com"
    })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({
      productId: s.productId,
      body: "Is it dishwasher safe?",
      published: false,
      moderatedAt: null,
      notifyByEmail: true,
      answerCount: 0,
      publishedAnswerCount: 0,
      answeredAt: null,
      source: "admin_api",
      metadata: {}
    })
    const id = created.body.id
    const listed = await s.req("GET", "/product-questions")
    expect(listed.status).toBe(200)
    expect(listed.body.data.map((q: { id: string }) => q.id)).toEqual([id])
    expect(listed.body.nextCursor).toBeNull()
    expect(await eventsOf(s.organizationId)).toEqual(["productQuestion.created"])

    const published = await s.req("PATCH", `/product-questions/${id}`, { published: true })
    expect(published.status, published.text).toBe(200)
    expect(published.body.published).toBe(true)
    expect(published.body.moderatedAt).not.toBeNull()
    expect(await eventsOf(s.organizationId)).toEqual(["productQuestion.created", "productQuestion.updated"])

    const edit = await s.req("PATCH", `/product-questions/${id}`, { body: "Edited text" })
    expectError(edit, 400, "INVALID_REQUEST")
    expect(issuePaths(edit)).toEqual(["body.body"])
    const editWithPublish = await s.req("PATCH", `/product-questions/${id}`, { published: false, body: "Edited text" })
    expectError(editWithPublish, 400, "INVALID_REQUEST")
    const after = await s.req("GET", `/product-questions/${id}`)
    expect(after.body.body).toBe("Is it dishwasher safe?")
    expect(after.body.published).toBe(true)
    expect(await eventsOf(s.organizationId)).toEqual(["productQuestion.created", "productQuestion.updated"])
  })

  it("null means none where the spec says `or null`, and is refused elsewhere", async () => {
    const s = await shop()
    const created = await s.req("POST", "/product-questions", {
      productId: s.productId,
      body: "Anonymous question",
      askerName: null,
      askerEmail: null,
      siteId: null,
      customerId: null
    })
    expect(created.status, created.text).toBe(201)
    expect(created.body).toMatchObject({
      askerName: null,
      askerEmail: null,
      siteId: null,
      customerId: null,
      notifyByEmail: false
    })
    for (const field of ["published", "metadata", "body", "productId", "notifyByEmail"]) {
      const res = await s.req("POST", "/product-questions", { productId: s.productId, body: "x", [field]: null })
      expectError(res, 400, "INVALID_REQUEST")
      expect(issuePaths(res)).toContain(`body.${field}`)
    }
    const named = await s.req("POST", "/product-questions", { productId: s.productId, body: "Named", askerName: "Ada" })
    const id = named.body.id
    const keep = await s.req("PATCH", `/product-questions/${id}`, { metadata: { k: "v" } })
    expect(keep.body).toMatchObject({ askerName: "Ada", metadata: { k: "v" }, moderatedAt: null })
    const anonymized = await s.req("PATCH", `/product-questions/${id}`, { askerName: null })
    expect(anonymized.status, anonymized.text).toBe(200)
    expect(anonymized.body.askerName).toBeNull()
    expect(anonymized.body.metadata).toEqual({ k: "v" })
    expectError(await s.req("PATCH", `/product-questions/${id}`, { published: null }), 400, "INVALID_REQUEST")
    expectError(await s.req("PATCH", `/product-questions/${id}`, { metadata: null }), 400, "INVALID_REQUEST")
    expect((await s.req("GET", `/product-questions/${id}`)).body).toMatchObject({ askerName: null, published: false })
  })

  it("bad input is a 400 naming the field and changes nothing", async () => {
    const s = await shop()
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ productId: s.productId, body: "x".repeat(501) }, "body.body"],
      [{ productId: s.productId, body: "   " }, "body.body"],
      [{ productId: s.productId }, "body.body"],
      [{ productId: s.productId, body: "nul \u0000 char" }, "body.body"],
      [{ productId: s.productId, body: "ok", askerEmail: "not-an-email" }, "body.askerEmail"],
      [{ productId: s.productId, body: "ok", askerEmail: "a@b.c\nBcc: x@y.z" }, "body.askerEmail"],
      [{ productId: s.productId, body: "ok", publised: true }, "body.publised"],
      [{ productId: "not-a-uuid", body: "ok" }, "body.productId"],
      [{ productId: "00000000-0000-4000-8000-000000000000", body: "ok" }, "body.productId"],
      [{ productId: s.productId, body: "ok", customerId: "00000000-0000-4000-8000-000000000000" }, "body.customerId"],
      [{ productId: s.productId, body: "ok", siteId: "00000000-0000-4000-8000-000000000000" }, "body.siteId"],
      [{ productId: s.productId, body: "ok", notifyByEmail: true }, "body.notifyByEmail"],
      [{ productId: s.productId, body: "ok", metadata: { a: 1 } }, "body.metadata.a"]
    ]
    for (const [payload, path] of cases) {
      const res = await s.req("POST", "/product-questions", payload)
      expectError(res, 400, "INVALID_REQUEST")
      expect(issuePaths(res), JSON.stringify(payload)).toContain(path)
    }
    const malformed = await server.request("POST", "/product-questions", { token: s.key, rawBody: "{\"productId\": " })
    expectError(malformed, 400, "INVALID_REQUEST")
    expect((await s.req("GET", "/product-questions")).body.data).toEqual([])
    expect(await eventsOf(s.organizationId)).toEqual([])
    // 500 characters are counted as a reader counts them: 500 emoji are fine.
    const emoji = await s.req("POST", "/product-questions", { productId: s.productId, body: "😀".repeat(500) })
    expect(emoji.status, emoji.text).toBe(201)
    const id = emoji.body.id
    const tooLong = await s.req("POST", `/product-questions/${id}/answers`, { body: "y".repeat(2001) })
    expectError(tooLong, 400, "INVALID_REQUEST")
    expect(issuePaths(tooLong)).toEqual(["body.body"])
    expect((await s.req("POST", `/product-questions/${id}/answers`, { body: "y".repeat(2000) })).status).toBe(201)
    expectError(
      await s.req("POST", `/product-questions/${id}/answers`, { body: "ok", authorType: "shopper" }),
      400,
      "INVALID_REQUEST"
    )
  })

  it("404 for unknown or foreign ids, 400 for malformed ids and unknown includes; permissions are enforced", async () => {
    const s = await shop()
    const other = await shop()
    const q = (await s.req("POST", "/product-questions", { productId: s.productId, body: "Mine" })).body
    const missing = "00000000-0000-4000-8000-000000000000"
    for (
      const [method, path, body] of [
        ["GET", `/product-questions/${missing}`, undefined],
        ["GET", `/product-questions/${q.id}`, undefined],
        ["PATCH", `/product-questions/${q.id}`, { published: true }],
        ["DELETE", `/product-questions/${q.id}`, undefined],
        ["GET", `/product-questions/${q.id}/answers`, undefined],
        ["POST", `/product-questions/${q.id}/answers`, { body: "Hi" }]
      ] as const
    ) {
      const res = method === "GET" && path.includes(missing)
        ? await s.req(method, path, body)
        : await other.req(method, path, body)
      expectError(res, 404, "NOT_FOUND")
    }
    expect((await s.req("GET", `/product-questions/${q.id}`)).body.published).toBe(false)
    const badId = await s.req("GET", "/product-questions/not-a-uuid")
    expectError(badId, 400, "INVALID_REQUEST")
    expect(issuePaths(badId)).toEqual(["path.id"])
    expectError(await s.req("GET", `/product-questions/${q.id}?include=files`), 400, "INVALID_REQUEST")
    expectError(await s.req("GET", "/product-questions?answered=yes"), 400, "INVALID_REQUEST")
    expectError(await s.req("GET", "/product-questions?limit=0"), 400, "INVALID_REQUEST")
    expectError(await s.req("GET", "/product-questions?sort=rating"), 400, "INVALID_REQUEST")
    expectError(await s.req("GET", "/product-questions?filter=%7B%22rating%22%3A5%7D"), 400, "INVALID_REQUEST")
    expectError(await s.req("GET", "/product-questions?colour=red"), 400, "INVALID_REQUEST")

    const reader = await shop({ permissions: ["reviews:read"] })
    const denied = await reader.req("POST", "/product-questions", { productId: reader.productId, body: "x" })
    expectError(denied, 403, "FORBIDDEN")
    expect(denied.body.error.details).toEqual({ permission: "reviews:write" })
    expect((await reader.req("GET", "/product-questions")).status).toBe(200)
    const writer = await shop({ permissions: ["reviews:write"] })
    expectError(await writer.req("GET", "/product-questions"), 403, "FORBIDDEN")
  })
})

describe("answers, listing and deletion", () => {
  it("answers: 201 merchant answers, {data} oldest first without a cursor, counts and answeredAt on the question", async () => {
    const s = await shop()
    const q = (await s.req("POST", "/product-questions", { productId: s.productId, body: "Oven safe?" })).body
    const draft = await s.req("POST", `/product-questions/${q.id}/answers`, { body: "Checking", published: false })
    expect(draft.status, draft.text).toBe(201)
    expect(draft.body).toMatchObject({
      productQuestionId: q.id,
      authorType: "merchant",
      published: false,
      authorName: "Test organization"
    })
    const first = await s.req("POST", `/product-questions/${q.id}/answers`, {
      body: "Yes",
      authorName: "Support",
      metadata: { ticket: "7" }
    })
    expect(first.body).toMatchObject({ published: true, authorName: "Support", metadata: { ticket: "7" } })
    const answers = await s.req("GET", `/product-questions/${q.id}/answers`)
    expect(answers.status).toBe(200)
    expect(Object.keys(answers.body)).toEqual(["data"])
    expect(answers.body.data.map((a: { id: string }) => a.id)).toEqual([draft.body.id, first.body.id])
    const after = (await s.req("GET", `/product-questions/${q.id}?include=answers,product`)).body
    expect(after).toMatchObject({ answerCount: 2, publishedAnswerCount: 1, answeredAt: first.body.createdAt })
    expect(after.answers).toHaveLength(2)
    expect(after.product).toMatchObject({ id: s.productId, title: "Ceramic mug" })
    expect(await eventsOf(s.organizationId)).toEqual([
      "productQuestion.created",
      "productQuestionAnswer.created",
      "productQuestionAnswer.created"
    ])
  })

  it("answered=true lists exactly the questions with a published answer; includes are batched per page", async () => {
    const s = await shop()
    const customer = await run(seedCustomer(s.organizationId, { email: "grace@example.com", firstName: "Grace" }))
    const post = async (body: string, extra: object = {}) =>
      (await s.req("POST", "/product-questions", { productId: s.productId, body, ...extra })).body.id as string
    const waiting = await post("waiting", { customerId: customer.id })
    const draftOnly = await post("draft only")
    const answered = await post("answered")
    await s.req("POST", `/product-questions/${draftOnly}/answers`, { body: "draft", published: false })
    await s.req("POST", `/product-questions/${answered}/answers`, { body: "done" })
    const ids = (res: TestResponse) => res.body.data.map((q: { id: string }) => q.id).sort()
    expect(ids(await s.req("GET", "/product-questions?answered=true"))).toEqual([answered])
    expect(ids(await s.req("GET", "/product-questions?answered=false"))).toEqual([waiting, draftOnly].sort())
    const withExtras = await s.req("GET", "/product-questions?include=customer,product,answers&sort=createdAt")
    expect(withExtras.status, withExtras.text).toBe(200)
    const [w, d, a] = withExtras.body.data
    expect(w.customer).toMatchObject({ id: customer.id, email: "grace@example.com" })
    expect(d.customer).toBeNull()
    expect(a.answers.map((x: { body: string }) => x.body)).toEqual(["done"])
    expect(w.product.title).toBe("Ceramic mug")
    const byCustomer = await s.req(
      "GET",
      `/product-questions?filter=${encodeURIComponent(JSON.stringify({ "customer.firstName": "Grace" }))}`
    )
    expect(ids(byCustomer)).toEqual([waiting])
    const searched = await s.req("GET", "/product-questions?search=CERAMIC&limit=2")
    expect(searched.body.data).toHaveLength(2)
    const next = await s.req("GET", `/product-questions?search=CERAMIC&limit=2&cursor=${searched.body.nextCursor}`)
    expect(next.body.data).toHaveLength(1)
    expect(next.body.nextCursor).toBeNull()
    expectError(
      await s.req("GET", `/product-questions?search=other&limit=2&cursor=${searched.body.nextCursor}`),
      400,
      "INVALID_REQUEST"
    )
  })

  it("DELETE returns the question, removes its answers, and leaves no asker email anywhere in the store", async () => {
    const s = await shop()
    const email = `erase-${s.organizationId}@example.com`
    const q =
      (await s.req("POST", "/product-questions", { productId: s.productId, body: "Delete me", askerEmail: email })).body
    const a1 = (await s.req("POST", `/product-questions/${q.id}/answers`, { body: "First" })).body
    await s.req("POST", `/product-questions/${q.id}/answers`, { body: "Second" })
    expect((await noticesOf(s.organizationId)).map((n) => n.recipient)).toEqual([email])
    expect(await tablesContaining(email)).not.toEqual([])

    const deleted = await s.req("DELETE", `/product-questions/${q.id}`)
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body).toMatchObject({ id: q.id, body: "Delete me", askerEmail: email, answerCount: 2 })
    expectError(await s.req("GET", `/product-questions/${q.id}`), 404, "NOT_FOUND")
    expectError(await s.req("GET", `/product-questions/${q.id}/answers`), 404, "NOT_FOUND")
    expectError(await s.req("DELETE", `/product-questions/${q.id}`), 404, "NOT_FOUND")
    expect(await noticesOf(s.organizationId)).toEqual([])
    expect(await tablesContaining(email)).toEqual([])
    expect(JSON.stringify(await tablesContaining(a1.id))).not.toContain("product_question_answers")
    expect((await eventsOf(s.organizationId)).at(-1)).toBe("productQuestion.deleted")
  })

  it("with Idempotency-Key, the responses recorded for retries keep no asker email after the deletion", async () => {
    const s = await shop()
    const email = `keyed-${s.organizationId}@example.com`
    const keyed = (method: string, path: string, key: string, body?: unknown) =>
      server.request(method, path, {
        token: s.key,
        headers: { "idempotency-key": key },
        ...(body === undefined ? {} : { body })
      })
    const body = { productId: s.productId, body: "Keyed", askerEmail: email }
    const created = await keyed("POST", "/product-questions", "create-q", body)
    expect(created.status, created.text).toBe(201)
    expect(await tablesContaining(email)).toContain("idempotency_keys")
    const deleted = await keyed("DELETE", `/product-questions/${created.body.id}`, "delete-q")
    expect(deleted.status, deleted.text).toBe(200)
    expect(deleted.body.askerEmail).toBe(email)
    expect(await tablesContaining(email)).toEqual([])
    const replayed = await keyed("DELETE", `/product-questions/${created.body.id}`, "delete-q")
    expect(replayed.headers.get("idempotent-replayed")).toBe("true")
    expect(replayed.body).toEqual({ ...deleted.body, askerEmail: null })
    const recreated = await keyed("POST", "/product-questions", "create-q", body)
    expect(recreated.body).toEqual({ ...created.body, askerEmail: null })
  })
})

// ---------------------------------------------------------------------------------------------------------------
// Email through a real SMTP server

/** The body of a single-part message as text (nodemailer uses 7bit or quoted-printable for plain text). */
const decodeBody = (raw: string): { readonly headers: string; readonly text: string } => {
  const split = raw.indexOf("\r\n\r\n")
  const headers = raw.slice(0, split)
  let body = raw.slice(split + 4)
  if (/content-transfer-encoding:\s*quoted-printable/i.test(headers)) {
    const bytes = body.replace(/=\r\n/g, "").replace(
      /=([0-9A-F]{2})/g,
      (_, h: string) => String.fromCharCode(parseInt(h, 16))
    )
    body = Buffer.from(bytes, "latin1").toString("utf8")
  } else if (/content-transfer-encoding:\s*base64/i.test(headers)) {
    body = Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
  }
  return { headers, text: body.replace(/\r\n/g, "\n") }
}

const headerOf = (headers: string, name: string): string => {
  const unfolded = headers.replace(/\r\n[ \t]+/g, " ")
  return new RegExp(`^${name}:\\s*(.*)$`, "im").exec(unfolded)?.[1] ?? ""
}

/** A received message with its subject and its body as text. */
const read = (message: ReceivedMessage) => {
  const { headers, text } = decodeBody(message.raw)
  return { ...message, subject: headerOf(headers, "Subject"), text }
}

describe("the asker's email, through SMTP", () => {
  let smtp: SmtpReceiver
  let worker: ManagedRuntime.ManagedRuntime<never, never> | undefined

  beforeAll(async () => {
    smtp = await startSmtpReceiver(0, { refuse: (address) => address.startsWith("bounce") })
    const settings: SmtpSettings = {
      url: Redacted.make(smtp.url),
      from: "Mug shop <answers@shop.example>"
    }
    const context = await store.context()
    worker = ManagedRuntime.make(
      EmailNoticeWorkerLive(settings, { pollIntervalMs: 20 }).pipe(Layer.provide(Layer.succeedContext(context)))
    )
    await worker.runPromise(Effect.void)
  })

  afterAll(async () => {
    await worker?.dispose()
    await smtp.close()
  })

  /** The messages the SMTP server accepted, read. */
  const inbox = () => smtp.messages.map(read)
  const delivered = (to: string) => inbox().filter((m) => m.to.includes(to))

  it("the first published answer emails the asker exactly once; a second answer sends nothing; no address sends nothing", async () => {
    const s = await shop()
    const email = `asker-${s.organizationId}@example.com`
    const bystanderEmail = `bystander-${s.organizationId}@example.com`
    const q = (await s.req("POST", "/product-questions", {
      productId: s.productId,
      body: "Does the mug keep coffee warm?",
      askerName: "Ada",
      askerEmail: email
    })).body
    const bystander = (await s.req("POST", "/product-questions", {
      productId: s.productId,
      body: "Is the handle comfortable for large hands?",
      askerName: "Bob",
      askerEmail: bystanderEmail
    })).body
    const anonymous =
      (await s.req("POST", "/product-questions", { productId: s.productId, body: "Nobody to tell?" })).body

    await s.req("POST", `/product-questions/${q.id}/answers`, { body: "A draft nobody sees", published: false })
    await s.req("POST", `/product-questions/${q.id}/answers`, {
      body: "Yes, for about an hour thanks to the double wall."
    })
    const [message] = await waitFor("the notice", () => delivered(email).length > 0 ? delivered(email) : undefined)
    expect(message!.to).toEqual([email])
    expect(message!.from).toBe("answers@shop.example")
    expect(message!.subject).toMatch(/answer/i)
    expect(message!.subject).toContain("Ceramic mug")
    expect(message!.text).toContain("Does the mug keep coffee warm?")
    expect(message!.text).toContain("Yes, for about an hour thanks to the double wall.")
    expect(message!.text).toContain("Hello Ada")
    expect(message!.text).not.toContain("A draft nobody sees")
    expect(message!.raw).not.toContain(bystanderEmail)
    expect(message!.raw).not.toContain("Bob")
    expect(message!.raw).not.toContain(bystander.body)
    expect(message!.raw).not.toContain(anonymous.body)
    await waitFor(
      "notifiedAt",
      async () => (await s.req("GET", `/product-questions/${q.id}`)).body.notifiedAt ?? undefined
    )

    await s.req("POST", `/product-questions/${q.id}/answers`, { body: "Also: it is microwave safe." })
    await s.req("POST", `/product-questions/${anonymous.id}/answers`, { body: "Answered, but nobody to tell." })
    // The worker sends what the outbox holds, and a notice commits with its answer: these answers added none, and
    // the one notice there is sent, once, so nothing more can go out.
    expect((await noticesOf(s.organizationId)).map((n) => [n.recipient, n.status, n.attempts])).toEqual([
      [email, "sent", 1]
    ])
    expect(delivered(email)).toHaveLength(1)
    expect(inbox().filter((m) => m.text.includes("microwave") || m.text.includes("nobody to tell"))).toEqual([])
    expect(delivered(bystanderEmail)).toEqual([])
  })

  it("a notice committed while no worker ran is sent when a worker starts, once", async () => {
    const s = await shop()
    const email = `restart-${s.organizationId}@example.com`
    await worker!.dispose()
    worker = undefined
    const q =
      (await s.req("POST", "/product-questions", { productId: s.productId, body: "Lid included?", askerEmail: email }))
        .body
    await s.req("POST", `/product-questions/${q.id}/answers`, { body: "Yes, bamboo." })
    expect(delivered(email)).toEqual([])
    expect((await noticesOf(s.organizationId))[0]!.status).toBe("pending")
    const context = await store.context()
    const settings: SmtpSettings = {
      url: Redacted.make(smtp.url),
      from: "Mug shop <answers@shop.example>"
    }
    // Two processes start at once; the notice still goes out exactly once.
    const a = ManagedRuntime.make(
      EmailNoticeWorkerLive(settings, { pollIntervalMs: 5 }).pipe(Layer.provide(Layer.succeedContext(context)))
    )
    const b = ManagedRuntime.make(
      EmailNoticeWorkerLive(settings, { pollIntervalMs: 5 }).pipe(Layer.provide(Layer.succeedContext(context)))
    )
    await Promise.all([a.runPromise(Effect.void), b.runPromise(Effect.void)])
    const sent = await waitFor("the notice recorded as sent", async () => {
      const [notice] = await noticesOf(s.organizationId)
      return notice?.status === "sent" ? notice : undefined
    })
    // Shutdown never cuts a claimed send short: had both workers claimed the notice, both sends are in by now.
    await Promise.all([a.dispose(), b.dispose()])
    expect(sent.attempts).toBe(1)
    expect(delivered(email)).toHaveLength(1)
    worker = ManagedRuntime.make(
      EmailNoticeWorkerLive(settings, { pollIntervalMs: 20 }).pipe(Layer.provide(Layer.succeedContext(context)))
    )
    await worker.runPromise(Effect.void)
  })

  it("a recipient the server refuses (550) fails the notice for good", async () => {
    const s = await shop()
    const email = `bounce-${s.organizationId}@example.com`
    const q =
      (await s.req("POST", "/product-questions", { productId: s.productId, body: "Bounce?", askerEmail: email })).body
    await s.req("POST", `/product-questions/${q.id}/answers`, { body: "Answer" })
    const notice = await waitFor("the refusal", async () => {
      const [n] = await noticesOf(s.organizationId)
      return n?.status === "failed" ? n : undefined
    })
    expect(notice.error).toContain("550")
    expect(notice.attempts).toBe(1)
    expect((await s.req("GET", `/product-questions/${q.id}`)).body.notifiedAt).toBeNull()
  })
})

describe("the asker's email without SMTP", () => {
  it("the server starts its worker by default; without SMTP the notice is logged and marked logged, not lost", async () => {
    const own = ManagedRuntime.make(StoreWithSupport)
    const ownServer = makeTestServer(Layer.succeedContext(await own.context()) as Layer.Layer<StoreServices>, {
      email: { worker: { pollIntervalMs: 10 } }
    })
    try {
      const { organizationId, key } = await ownServer.provision()
      const org = organizationId as Kernel.OrganizationId
      const product = await own.runPromise(seedProduct(org))
      const email = `logged-${organizationId}@example.com`
      const req = (method: string, path: string, body?: unknown) =>
        ownServer.request(method, path, { token: key, body })
      const q =
        (await req("POST", "/product-questions", { productId: product.id, body: "Logged?", askerEmail: email })).body
      await req("POST", `/product-questions/${q.id}/answers`, { body: "Yes" })
      const notice = await waitFor("the logged notice", async () => {
        const [n] = await own.runPromise(Questions.EmailOutboxRepository.use((o) => o.listForOrganization(org)))
        return n?.status === "logged" ? n : undefined
      })
      expect(notice.recipient).toBe(email)
      expect((await req("GET", `/product-questions/${q.id}`)).body.notifiedAt).toBeNull()
    } finally {
      await ownServer.dispose()
      await own.dispose()
    }
  })

  it("classifies transport failures: never transmitted is retryable, a reply code is definitive, the rest uncertain", () => {
    expect(classifySmtpError({ code: "ESOCKET", originalCode: "ECONNREFUSED", message: "refused" })).toMatchObject({
      _tag: "NotSent",
      permanent: false
    })
    expect(classifySmtpError({ code: "ETIMEDOUT", timeoutType: "GREETING_TIMEOUT" })).toMatchObject({
      _tag: "NotSent",
      permanent: false
    })
    expect(classifySmtpError({ code: "EENVELOPE", responseCode: 550, permanent: true })).toMatchObject({
      _tag: "NotSent",
      permanent: true
    })
    expect(classifySmtpError({ code: "EMESSAGE", responseCode: 451 })).toMatchObject({
      _tag: "NotSent",
      permanent: false
    })
    expect(classifySmtpError({ code: "ETIMEDOUT", timeoutType: "SOCKET_TIMEOUT" })).toMatchObject({ _tag: "Uncertain" })
    expect(classifySmtpError({ code: "ECONNECTION" })).toMatchObject({ _tag: "Uncertain" })
  })
})

describe("OpenAPI", () => {
  it("documents the product question operations with their permissions and costs", async () => {
    const spec = (await server.request("GET", "/openapi.json")).body
    expect(spec.paths["/product-questions"].get["x-required-permission"]).toBe("reviews:read")
    expect(spec.paths["/product-questions"].post["x-required-permission"]).toBe("reviews:write")
    expect(spec.paths["/product-questions/{id}"].patch["x-rate-limit-cost"]).toBe(1)
    expect(spec.paths["/product-questions/{id}/answers"].post["x-required-permission"]).toBe("reviews:write")
  })
})
