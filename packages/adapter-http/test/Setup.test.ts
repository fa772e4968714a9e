/**
 * Organization setup over HTTP: the response shapes, validation of every body (each bound, enum and unknown key is a
 * 400 naming the field and changes nothing), permissions, and the configured URLs. The rules themselves are tested
 * on every store by the conformance suite (testing/src/setup/SetupConformance.ts).
 */
import { afterAll, describe, expect, it } from "vitest"
import { noSetupSignals as noSignals, untouchedArea as untouched } from "@feedback/testing"
import { expectInvalid } from "./Http.ts"
import { makeTestServer, type TestResponse } from "./TestServer.ts"

const server = makeTestServer()
afterAll(() => server.dispose())

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

const getSetup = (key: string) => server.request("GET", "/organization/setup", { token: key })
const patchSetup = (key: string, body: unknown) => server.request("PATCH", "/organization/setup", { token: key, body })
const postReviews = (key: string, body: unknown) =>
  server.request("POST", "/organization/setup/reviews", { token: key, body })

describe("GET /organization/setup", () => {
  it("a new organization: the full state, every signal false and every area needing setup", async () => {
    const { key } = await server.provision()
    const res = await getSetup(key)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      signals: noSignals,
      areas: { reviews: untouched, loyalty: untouched, wishlists: untouched, site: untouched },
      publishableKey: null,
      // No EMBED_SCRIPT_URL: the API's own copy; no PUBLIC_API_BASE_URL: the origin the request was addressed to.
      embedScriptUrl: "http://test/storefront/embed.js",
      apiBaseUrl: "http://test"
    })
    expect(res.headers.get("x-rate-limit-cost")).toBe("1")
  })

  it("reads the records the operator API creates, and records a running area as completed", async () => {
    const { organizationId, key } = await server.provision()
    const pk = await server.operator("POST", `/organizations/${organizationId}/publishable-keys`)
    expect(
      (await server.operator("POST", `/organizations/${organizationId}/integrations`, { platform: "shopify" })).status
    ).toBe(201)
    expect(
      (await server.operator("POST", `/organizations/${organizationId}/loyalty-programs`, { status: "live" })).status
    ).toBe(201)
    expect((await server.operator("POST", `/organizations/${organizationId}/wishlists`, {})).status).toBe(201)
    const res = await getSetup(key)
    expect(res.status).toBe(200)
    expect(res.body.publishableKey).toBe(pk.body.key)
    expect(res.body.signals).toEqual({
      ...noSignals,
      hasPublishableKey: true,
      hasIntegration: true,
      hasLoyaltyProgram: true,
      hasWishlist: true
    })
    expect(res.body.areas.wishlists).toEqual({
      ...untouched,
      completedAt: expect.stringMatching(TIMESTAMP),
      configured: true,
      needsSetup: false
    })
    // A program on no site does not configure loyalty; a key without a site does not configure the site area.
    expect(res.body.areas.loyalty).toEqual(untouched)
    expect(res.body.areas.site).toEqual(untouched)
    const again = await getSetup(key)
    expect(again.body.areas.wishlists.completedAt).toBe(res.body.areas.wishlists.completedAt)
  })

  it("answers the configured URLs", async () => {
    const configured = makeTestServer(undefined, {
      embedScriptUrl: "https://widgets.shop.test/v2/embed.js",
      publicApiBaseUrl: "https://api.shop.test/"
    })
    try {
      const { key } = await configured.provision()
      const res = await configured.request("GET", "/organization/setup", { token: key })
      expect(res.body.embedScriptUrl).toBe("https://widgets.shop.test/v2/embed.js")
      expect(res.body.apiBaseUrl).toBe("https://api.shop.test")
    } finally {
      await configured.dispose()
    }
  })
})

describe("PATCH /organization/setup", () => {
  it("records the outcome on one area only, keeps the first time, and answers the state after it", async () => {
    const { key } = await server.provision()
    const first = await patchSetup(key, { area: "reviews", outcome: "dismissed" })
    expect(first.status).toBe(200)
    expect(first.body.areas.reviews).toEqual({
      ...untouched,
      dismissedAt: expect.stringMatching(TIMESTAMP),
      needsSetup: false
    })
    expect(first.body.areas.loyalty).toEqual(untouched)
    expect(first.body.signals).toEqual(noSignals)
    const second = await patchSetup(key, { area: "reviews", outcome: "dismissed" })
    expect(second.body.areas.reviews.dismissedAt).toBe(first.body.areas.reviews.dismissedAt)
    const banner = await patchSetup(key, { area: "site", outcome: "widgetBannerDismissed" })
    expect(banner.body.areas.site).toEqual({ ...untouched, widgetBannerDismissedAt: expect.stringMatching(TIMESTAMP) })
    const completed = await patchSetup(key, { area: "site", outcome: "completed" })
    expect(completed.body.areas.site).toMatchObject({
      completedAt: expect.stringMatching(TIMESTAMP),
      needsSetup: false
    })
    expect((await getSetup(key)).body.areas).toEqual(completed.body.areas)
  })

  it.each([
    ["an unknown area", { area: "shipping", outcome: "dismissed" }, "body.area"],
    ["an unknown outcome", { area: "reviews", outcome: "skipped" }, "body.outcome"],
    ["a missing outcome", { area: "reviews" }, "body.outcome"],
    ["a missing area", { outcome: "dismissed" }, "body.area"],
    ["a null area", { area: null, outcome: "dismissed" }, "body.area"],
    ["an unknown field", { area: "reviews", outcome: "dismissed", reason: "later" }, "body.reason"]
  ])("%s is a 400 naming the field, and changes nothing", async (_name, body, path) => {
    const { key } = await server.provision()
    expectInvalid(await patchSetup(key, body), path)
    expect((await getSetup(key)).body.areas.reviews).toEqual(untouched)
  })
})

describe("POST /organization/setup/reviews", () => {
  it("with a reminder: 201 with the state, a four-step active flow and two templates", async () => {
    const { key } = await server.provision()
    const res = await postReviews(key, {
      data: { triggerEvent: "order.delivered", delayDays: 3, reminder: true, reminderDelayDays: 5, template: "minimal" }
    })
    expect(res.status, res.text).toBe(201)
    expect(Object.keys(res.body).sort()).toEqual(["data", "emailTemplates", "surveyFlow"])
    const { data, surveyFlow, emailTemplates } = res.body
    expect(data.signals).toEqual({ ...noSignals, hasActiveSurveyFlow: true })
    expect(data.areas.reviews).toEqual({
      ...untouched,
      completedAt: expect.stringMatching(TIMESTAMP),
      configured: true,
      needsSetup: false
    })
    expect(data.areas.loyalty).toEqual(untouched)
    expect(emailTemplates).toHaveLength(2)
    for (const t of emailTemplates) {
      expect(Object.keys(t).sort()).toEqual(["body", "createdAt", "id", "name", "subject", "type", "updatedAt"])
      expect(t.id).toMatch(UUID)
      expect(t.createdAt).toMatch(TIMESTAMP)
    }
    expect(emailTemplates.map((t: { type: string }) => t.type)).toEqual(["reviewRequest", "reviewReminder"])
    expect(surveyFlow).toEqual({
      id: expect.stringMatching(UUID),
      name: expect.any(String),
      isActive: true,
      triggerEvent: "order.delivered",
      condition: "",
      steps: [
        {
          id: expect.stringMatching(UUID),
          type: "wait",
          position: 0,
          emailTemplateId: null,
          url: null,
          waitSeconds: 259_200
        },
        {
          id: expect.stringMatching(UUID),
          type: "email",
          position: 1,
          emailTemplateId: emailTemplates[0].id,
          url: null,
          waitSeconds: null
        },
        {
          id: expect.stringMatching(UUID),
          type: "wait",
          position: 2,
          emailTemplateId: null,
          url: null,
          waitSeconds: 432_000
        },
        {
          id: expect.stringMatching(UUID),
          type: "email",
          position: 3,
          emailTemplateId: emailTemplates[1].id,
          url: null,
          waitSeconds: null
        }
      ],
      metadata: {},
      createdAt: expect.stringMatching(TIMESTAMP),
      updatedAt: expect.stringMatching(TIMESTAMP)
    })
    const after = await getSetup(key)
    expect(after.body.signals.hasActiveSurveyFlow).toBe(true)
    expect(after.body.areas.reviews.completedAt).toBe(data.areas.reviews.completedAt)
  })

  it("with empty answers: every default (one template, wait 14 days → email on order.fulfilled)", async () => {
    const { key } = await server.provision()
    const res = await postReviews(key, { data: {} })
    expect(res.status, res.text).toBe(201)
    expect(res.body.emailTemplates).toHaveLength(1)
    expect(res.body.surveyFlow.triggerEvent).toBe("order.fulfilled")
    expect(res.body.surveyFlow.steps.map((s: { type: string; waitSeconds: number | null }) => [s.type, s.waitSeconds]))
      .toEqual([["wait", 14 * 86_400], ["email", null]])
  })

  it("a second call while the guided flow is active is a 409 naming it, in the envelope", async () => {
    const { key } = await server.provision()
    const first = await postReviews(key, { data: {} })
    expect(first.status).toBe(201)
    const again = await postReviews(key, { data: {} })
    expect(again.status).toBe(409)
    expect(again.body.error.code).toBe("CONFLICT")
    expect(again.body.error.message).toContain(first.body.surveyFlow.id)
  })

  it("accepts every bound", async () => {
    for (
      const data of [
        { delayDays: 0, reminderDelayDays: 1, autoPublishMinRating: 1 },
        { delayDays: 365, reminder: true, reminderDelayDays: 365, autoPublish: true, autoPublishMinRating: 5 },
        { triggerEvent: "order.created", template: "photo" }
      ]
    ) {
      // An organization each: the guided setup runs once while its flow is active.
      const { key } = await server.provision()
      const res = await postReviews(key, { data })
      expect(res.status, `${JSON.stringify(data)}: ${res.text}`).toBe(201)
    }
  })

  const invalid: ReadonlyArray<readonly [string, unknown, string]> = [
    ["delayDays -1", { data: { delayDays: -1 } }, "body.data.delayDays"],
    ["delayDays 366", { data: { delayDays: 366 } }, "body.data.delayDays"],
    ["delayDays 1.5", { data: { delayDays: 1.5 } }, "body.data.delayDays"],
    ["delayDays as a string", { data: { delayDays: "14" } }, "body.data.delayDays"],
    ["delayDays null", { data: { delayDays: null } }, "body.data.delayDays"],
    ["reminderDelayDays 0", { data: { reminder: true, reminderDelayDays: 0 } }, "body.data.reminderDelayDays"],
    ["reminderDelayDays 366", { data: { reminder: true, reminderDelayDays: 366 } }, "body.data.reminderDelayDays"],
    [
      "autoPublishMinRating 0",
      { data: { autoPublish: true, autoPublishMinRating: 0 } },
      "body.data.autoPublishMinRating"
    ],
    ["autoPublishMinRating 6", { data: { autoPublishMinRating: 6 } }, "body.data.autoPublishMinRating"],
    ["an unknown triggerEvent", { data: { triggerEvent: "order.paid" } }, "body.data.triggerEvent"],
    ["an unknown template", { data: { template: "fancy" } }, "body.data.template"],
    ["reminder as a string", { data: { reminder: "yes" } }, "body.data.reminder"],
    ["autoPublish as a number", { data: { autoPublish: 1 } }, "body.data.autoPublish"],
    ["an unknown key inside data", { data: { delaydays: 3 } }, "body.data.delaydays"],
    ["an unknown key beside data", { data: {}, reminder: true }, "body.reminder"],
    ["no data", {}, "body.data"],
    ["data not an object", { data: [] }, "body.data"]
  ]
  it.each(invalid)("%s is a 400 naming the field, and creates nothing", async (_name, body, path) => {
    const { key } = await server.provision()
    expectInvalid(await postReviews(key, body), path)
    const state = await getSetup(key)
    expect(state.body.signals.hasActiveSurveyFlow).toBe(false)
    expect(state.body.areas.reviews).toEqual(untouched)
  })

  it("reports every issue of the answers at once", async () => {
    const { key } = await server.provision()
    const res = await postReviews(key, { data: { delayDays: 400, template: "fancy", extra: 1 } })
    expectInvalid(res, "body.data.delayDays")
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path).sort())
      .toEqual(["body.data.delayDays", "body.data.extra", "body.data.template"])
  })
})

describe("permissions", () => {
  it("GET needs settings:read; PATCH and the guided setup need settings:write; a refusal changes nothing", async () => {
    const { organizationId, key: full } = await server.provision()
    const other = await server.operator("POST", `/organizations/${organizationId}/keys`, {
      permissions: ["reviews:read", "reviews:write"]
    })
    const readOnly = await server.operator("POST", `/organizations/${organizationId}/keys`, {
      permissions: ["settings:read"]
    })
    const writeOnly = await server.operator("POST", `/organizations/${organizationId}/keys`, {
      permissions: ["settings:write"]
    })
    const forbidden = (res: TestResponse, permission: string) => {
      expect(res.status).toBe(403)
      expect(res.body.error.code).toBe("FORBIDDEN")
      expect(res.body.error.details).toEqual({ permission })
    }
    forbidden(await getSetup(other.body.secretKey), "settings:read")
    forbidden(await getSetup(writeOnly.body.secretKey), "settings:read")
    forbidden(await patchSetup(readOnly.body.secretKey, { area: "site", outcome: "dismissed" }), "settings:write")
    forbidden(await postReviews(readOnly.body.secretKey, { data: { reminder: true } }), "settings:write")
    forbidden(await postReviews(other.body.secretKey, { data: {} }), "settings:write")
    // The permission is checked before the body: an invalid body without it is still a 403.
    forbidden(await postReviews(readOnly.body.secretKey, { data: { delayDays: -1 } }), "settings:write")
    const state = await getSetup(full)
    expect(state.body.areas.site).toEqual(untouched)
    expect(state.body.signals.hasActiveSurveyFlow).toBe(false)
    expect((await patchSetup(writeOnly.body.secretKey, { area: "site", outcome: "dismissed" })).status).toBe(200)
    expect((await server.request("GET", "/organization/setup")).status).toBe(401)
  })
})

describe("OpenAPI", () => {
  it("documents the three operations with their permissions", async () => {
    const spec = (await server.request("GET", "/openapi.json")).body
    expect(spec.paths["/organization/setup"].get["x-required-permission"]).toBe("settings:read")
    expect(spec.paths["/organization/setup"].patch["x-required-permission"]).toBe("settings:write")
    const post = spec.paths["/organization/setup/reviews"].post
    expect(post["x-required-permission"]).toBe("settings:write")
    expect(Object.keys(post.responses)).toEqual(expect.arrayContaining(["201", "400", "401", "403", "429"]))
  })
})
