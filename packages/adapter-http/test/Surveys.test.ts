/**
 * Survey flows over HTTP (docs/DECISIONS.md §48): a merchant's first review request end to end, sent by the server's own
 * worker (its log transport, no SMTP), and the survey endpoints' errors: every bad input a 4xx in the envelope that
 * changes nothing.
 */
import { afterAll, describe, expect, it } from "vitest"
import { makeSeededServer, testStores } from "./SeededServer.ts"
import { makeTestServer } from "./TestServer.ts"

const expectError = (res: { status: number; body: any }, status: number, code: string, path?: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status)
  expect(res.body?.error?.code).toBe(code)
  if (path !== undefined) expect(res.body.error.details.issues.map((i: any) => i.path)).toContain(path)
}

describe.each(testStores)("surveys over HTTP (%s)", (_name, makeStore) => {
  const server = makeSeededServer(makeStore)
  afterAll(() => server.dispose())

  const shop = async (delayDays: number) => {
    const tenant = await server.provision()
    expect(
      (await server.request("POST", "/products", { token: tenant.key, body: { slug: "mug", title: "Mug" } })).status
    ).toBe(201)
    const setup = await server.request("POST", "/organization/setup/reviews", {
      token: tenant.key,
      body: { data: { delayDays, reminder: false } }
    })
    expect(setup.status, JSON.stringify(setup.body)).toBe(201)
    return tenant
  }

  it("setup with delayDays 0, one order created fulfilled: the request goes out with its survey link", async () => {
    const { key } = await shop(0)
    const order = await server.request("POST", "/orders", {
      token: key,
      body: { customer: { email: "ada@example.com" }, lines: [{ productSlug: "mug" }], status: "fulfilled" }
    })
    expect(order.status).toBe(201)
    const listed = async () =>
      (await server.request(
        "GET",
        `/surveys?filter=${encodeURIComponent(JSON.stringify({ "order.id": order.body.id }))}`,
        { token: key }
      )).body.data
    const [enrolled] = await listed()
    expect(enrolled).toMatchObject({ orderId: order.body.id, customerId: order.body.customerId, reason: null })
    expect(enrolled.url).toMatch(/^http:\/\/localhost:3000\/r\/[A-Za-z0-9_-]{43}$/)
    // The server's survey worker sends it (without SMTP_URL, to the log): wait for the outcome, not a fixed time.
    let sent: any
    for (let i = 0; i < 200 && sent === undefined; i++) {
      const [survey] = await listed()
      if (survey.status === "sent") sent = survey
      else await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(sent?.steps.map((s: any) => [s.type, s.outcome])).toEqual([["wait", null], ["email", "sent"]])
    expect((await server.request("GET", `/surveys/${sent.id}`, { token: key })).body).toEqual(sent)
  }, 30_000)

  it("bad input is a 4xx in the envelope and changes nothing; permissions; another organization's survey is a 404", async () => {
    const { key } = await shop(7)
    const order = await server.request("POST", "/orders", {
      token: key,
      body: { customer: { email: "b@example.com" }, lines: [{ productSlug: "mug" }] }
    })
    const before = (await server.request("GET", "/surveys", { token: key })).body
    expect(before.data).toEqual([])
    expectError(
      await server.request("POST", "/surveys", { token: key, body: {} }),
      400,
      "INVALID_REQUEST",
      "body.orderId"
    )
    expectError(
      await server.request("POST", "/surveys", { token: key, body: { orderId: "nope" } }),
      400,
      "INVALID_REQUEST",
      "body.orderId"
    )
    expectError(
      await server.request("POST", "/surveys", { token: key, body: { orderId: order.body.id, flow: "x" } }),
      400,
      "INVALID_REQUEST",
      "body.flow"
    )
    expectError(
      await server.request("POST", "/surveys", { token: key, body: { orderId: order.body.customerId } }),
      400,
      "INVALID_REQUEST",
      "body.orderId"
    )
    expectError(
      await server.request("POST", "/surveys", { token: key, body: { orderId: order.body.id, flowId: order.body.id } }),
      400,
      "INVALID_REQUEST",
      "body.flowId"
    )
    expectError(await server.request("GET", "/surveys/not-a-uuid", { token: key }), 400, "INVALID_REQUEST", "path.id")
    expectError(
      await server.request("GET", "/surveys?sort=dueAt", { token: key }),
      400,
      "INVALID_REQUEST",
      "query.sort"
    )
    expectError(
      await server.request("GET", `/surveys?filter=${encodeURIComponent("{\"orderId\":1}")}`, { token: key }),
      400,
      "INVALID_REQUEST",
      "filter.orderId"
    )
    expectError(await server.request("DELETE", `/surveys/${order.body.id}`, { token: key }), 404, "NOT_FOUND")
    expect((await server.request("GET", "/surveys", { token: key })).body).toEqual(before)
    const reader = await server.provision({ permissions: ["reviews:read"] })
    const forbidden = await server.request("POST", "/surveys", { token: reader.key, body: { orderId: order.body.id } })
    expectError(forbidden, 403, "FORBIDDEN")
    expect(forbidden.body.error.details.permission).toBe("reviews:write")
    const created = await server.request("POST", "/surveys", { token: key, body: { orderId: order.body.id } })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    expect(created.body.steps.map((s: any) => s.type)).toEqual(["wait", "email"])
    expectError(
      await server.request("POST", "/surveys", { token: key, body: { orderId: order.body.id } }),
      409,
      "CONFLICT"
    )
    expectError(await server.request("GET", `/surveys/${created.body.id}`, { token: reader.key }), 404, "NOT_FOUND")
    // A flow condition that does not parse is refused when the flow is saved.
    const flows = (await server.request("GET", "/survey-flows", { token: key })).body.data
    expectError(
      await server.request("PATCH", `/survey-flows/${flows[0].id}`, {
        token: key,
        body: { condition: "{\"total\":1}" }
      }),
      400,
      "INVALID_REQUEST",
      "body.condition.total"
    )
    const deleted = await server.request("DELETE", `/surveys/${created.body.id}`, { token: key })
    expect(deleted.body.id).toBe(created.body.id)
    expectError(await server.request("GET", `/surveys/${created.body.id}`, { token: key }), 404, "NOT_FOUND")
  })
})

describe.each(testStores)("a survey email's unsubscribe link over HTTP (%s)", (_name, makeStore) => {
  // The server's own worker sends to the log (no SMTP_URL): the test reads the message from there, as a merchant would.
  const logLines: Array<string> = []
  const server = makeTestServer(makeStore(), { log: (line) => logLines.push(line) })
  afterAll(() => server.dispose())

  const until = async <A>(find: () => Promise<A | undefined> | A | undefined): Promise<A> => {
    for (let i = 0; i < 400; i++) {
      const found = await find()
      if (found !== undefined) return found
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    throw new Error("condition not reached")
  }
  const loggedEmailTo = (to: string) =>
    logLines.map((line) => JSON.parse(line)).find((entry) => JSON.stringify(entry).includes(`"to":"${to}"`))

  it(
    "POSTing the List-Unsubscribe URL of a sent request opts the customer out: their next survey is skipped",
    async () => {
      const { key } = await server.provision()
      expect((await server.request("POST", "/products", { token: key, body: { slug: "mug", title: "Mug" } })).status)
        .toBe(201)
      const setup = await server.request("POST", "/organization/setup/reviews", {
        token: key,
        body: { data: { delayDays: 0, reminder: false } }
      })
      expect(setup.status, JSON.stringify(setup.body)).toBe(201)
      const email = "lin.unsubscribe@example.com"
      const order = (orderNumber: string) =>
        server.request("POST", "/orders", {
          token: key,
          body: {
            orderNumber,
            customer: { email, firstName: "Lin" },
            lines: [{ productSlug: "mug" }],
            status: "fulfilled"
          }
        })
      const first = await order("U-1")
      expect(first.status).toBe(201)
      const surveyOf = async (orderId: string) =>
        (await server.request(
          "GET",
          `/surveys?filter=${encodeURIComponent(JSON.stringify({ "order.id": orderId }))}`,
          { token: key }
        )).body.data[0]
      const logged = await until(() => loggedEmailTo(email))
      const flat = JSON.stringify(logged)
      const header = /"List-Unsubscribe":"<([^>"]+)>"/.exec(flat)?.[1]
      expect(header).toMatch(/^http:\/\/localhost:3000\/u\/[A-Za-z0-9_-]{22,64}$/)
      expect(flat).toContain("How was your order, Lin?")
      const survey = await surveyOf(first.body.id)
      // Both links in the text part (and the HTML part) of the logged message.
      const text: string = JSON.parse(flat.match(/"text":("(?:[^"\\]|\\.)*")/)![1]!)
      expect(text).toContain(survey.url)
      expect(text).toContain(header!)
      expect(flat).toContain(`href=\\"${survey.url}\\"`)
      expect(flat).toContain(`href=\\"${header}\\"`)

      // A mail client's one-click POST to exactly that URL.
      const oneClick = await server.request("POST", new URL(header!).pathname, {
        rawBody: "List-Unsubscribe=One-Click",
        headers: { "content-type": "application/x-www-form-urlencoded" }
      })
      expect(oneClick.status).toBe(200)
      const customer = (await server.request("GET", `/customers/${first.body.customerId}`, { token: key })).body
      expect(customer).toMatchObject({ emailOptOut: true, emailOptOutSource: "unsubscribe_link" })

      const second = await order("U-2")
      expect(second.status).toBe(201)
      const skipped = await surveyOf(second.body.id)
      expect([skipped.status, skipped.reason]).toEqual(["skipped", "the customer opted out of email"])
      expect(skipped.steps.every((s: { outcome: string | null }) => s.outcome === "skipped")).toBe(true)
    },
    30_000
  )
})
