/**
 * The review automation over HTTP (docs/DECISIONS.md §13): what the guided setup creates is listed, edited and deleted
 * through `/email-templates` and `/survey-flows`, with 400s that name the field, the in-use 409, and the setup signal
 * following `isActive`. The rules themselves are proven on every store by the core's conformance suite.
 */
import { beforeAll, expect, it } from "vitest"
import { useTestServer } from "./Http.ts"
import { makeTestServer } from "./TestServer.ts"

const http = useTestServer(() => makeTestServer())
const { call } = http
let readOnly: string
beforeAll(async () => {
  readOnly = (await http.server.provision({ permissions: ["settings:read"] })).key
})

it("edits what the guided setup created, announces it, and keeps templates that flows send", async () => {
  const setup = await call("POST", "/organization/setup/reviews", { data: { reminder: true } })
  expect(setup.status).toBe(201)
  const flowId: string = setup.body.surveyFlow.id
  const [request, reminder] = setup.body.emailTemplates as Array<{ id: string; subject: string }>

  const templates = await call("GET", "/email-templates?limit=1")
  expect(templates.status).toBe(200)
  expect(templates.body.data).toHaveLength(1)
  const next = await call("GET", `/email-templates?limit=1&cursor=${encodeURIComponent(templates.body.nextCursor)}`)
  expect([...templates.body.data, ...next.body.data].map((t: { id: string }) => t.id).sort()).toEqual(
    [request!.id, reminder!.id].sort()
  )

  const edited = await call("PATCH", `/email-templates/${request!.id}`, { subject: "How did we do?" })
  expect(edited.status).toBe(200)
  expect(edited.body.subject).toBe("How did we do?")
  expect((await call("GET", `/email-templates/${request!.id}`)).body.subject).toBe("How did we do?")

  const inUse = await call("DELETE", `/email-templates/${reminder!.id}`)
  expect(inUse.status).toBe(409)
  expect(inUse.body.error.code).toBe("CONFLICT")
  expect(inUse.body.error.message).toContain(flowId)

  const off = await call("PATCH", `/survey-flows/${flowId}`, {
    isActive: false,
    steps: [{ type: "wait", position: 0, waitSeconds: 86_400 }, {
      type: "email",
      position: 1,
      emailTemplateId: request!.id
    }]
  })
  expect(off.status).toBe(200)
  expect(off.body.isActive).toBe(false)
  expect(off.body.steps).toHaveLength(2)
  expect((await call("GET", "/organization/setup")).body.signals.hasActiveSurveyFlow).toBe(false)
  expect((await call("DELETE", `/email-templates/${reminder!.id}`)).status).toBe(200)
  expect((await call("GET", `/email-templates/${reminder!.id}`)).status).toBe(404)

  const deleted = await call("DELETE", `/survey-flows/${flowId}`)
  expect(deleted.status).toBe(200)
  expect(deleted.body.id).toBe(flowId)
  expect((await call("GET", "/survey-flows")).body.data).toEqual([])
})

it("answers 400 naming the field for malformed edits, and changes nothing", async () => {
  const setup = await call("POST", "/organization/setup/reviews", { data: {} })
  const flowId: string = setup.body.surveyFlow.id
  const cases: Array<[unknown, string]> = [
    [{ steps: [{ type: "wait", position: 0 }] }, "body.steps[0].waitSeconds"],
    [{ steps: [{ type: "sms", position: 0 }] }, "body.steps[0].type"],
    [{ steps: [{ type: "wait", position: 0, waitSeconds: 31_536_001 }] }, "body.steps[0].waitSeconds"],
    [
      { steps: [{ type: "email", position: 0, emailTemplateId: "00000000-0000-4000-8000-000000000001" }] },
      "body.steps[0].emailTemplateId"
    ],
    [{ isActive: "no" }, "body.isActive"],
    [{ colour: "blue" }, "body.colour"]
  ]
  for (const [body, path] of cases) {
    const res = await call("PATCH", `/survey-flows/${flowId}`, body)
    expect(res.status, JSON.stringify(res.body)).toBe(400)
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).toContain(path)
  }
  expect((await call("GET", `/survey-flows/${flowId}`)).body).toEqual(setup.body.surveyFlow)
  const templateId: string = setup.body.emailTemplates[0].id
  expect((await call("PATCH", `/email-templates/${templateId}`, { subject: "" })).status).toBe(400)
  for (
    const [body, path] of [
      [{ subject: "Hi {{ customer.firstName" }, "body.subject"],
      [{ body: "{% include 'secrets' %}" }, "body.body"],
      [{ body: "{% if a %}".repeat(30) + "{% endif %}".repeat(30) }, "body.body"]
    ] as const
  ) {
    const res = await call("PATCH", `/email-templates/${templateId}`, body)
    expect(res.status, JSON.stringify(res.body)).toBe(400)
    expect(res.body.error.code).toBe("INVALID_REQUEST")
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).toEqual([path])
  }
  expect((await call("GET", `/email-templates/${templateId}`)).body).toEqual(setup.body.emailTemplates[0])
})

it("needs settings:write to change and settings:read to read", async () => {
  // An organization of its own: the guided setup runs once while its flow is active.
  const { key } = await http.server.provision()
  const setup = await call("POST", "/organization/setup/reviews", { data: {} }, key)
  expect((await call("GET", "/survey-flows", undefined, readOnly)).status).toBe(200)
  for (
    const [method, path] of [["DELETE", `/survey-flows/${setup.body.surveyFlow.id}`], [
      "PATCH",
      `/email-templates/${setup.body.emailTemplates[0].id}`
    ]] as const
  ) {
    const denied = await call(method, path, method === "PATCH" ? { name: "x" } : undefined, readOnly)
    expect(denied.status).toBe(403)
    expect(denied.body.error.code).toBe("FORBIDDEN")
  }
  expect((await call("GET", `/survey-flows/${setup.body.surveyFlow.id}`, undefined, key)).status).toBe(200)
})

it("review settings: GET reads the defaults, PATCH changes sent fields, bad input is a 400 naming the field and changes nothing", async () => {
  const { key: own } = await http.server.provision()
  const settings = (method: string, body?: unknown, token = own) =>
    http.server.request(method, "/review-settings", { token, body })
  expect((await settings("GET")).body).toEqual({
    autoPublish: false,
    autoPublishMinRating: 4,
    autoPublishVerifiedOnly: false
  })
  const patched = await settings("PATCH", { autoPublish: true, autoPublishMinRating: 5 })
  expect(patched.status).toBe(200)
  expect(patched.body).toEqual({ autoPublish: true, autoPublishMinRating: 5, autoPublishVerifiedOnly: false })
  const cases: Array<[unknown, string]> = [
    [{ autoPublishMinRating: 0 }, "body.autoPublishMinRating"],
    [{ autoPublishMinRating: 6 }, "body.autoPublishMinRating"],
    [{ autoPublishMinRating: 4.5 }, "body.autoPublishMinRating"],
    [{ autoPublish: "yes" }, "body.autoPublish"],
    [{ autoPublishVerifiedOnly: null }, "body.autoPublishVerifiedOnly"],
    [{ autopublish: true }, "body.autopublish"]
  ]
  for (const [body, path] of cases) {
    const res = await settings("PATCH", body)
    expect(res.status, JSON.stringify(res.body)).toBe(400)
    expect(res.body.error.code).toBe("INVALID_REQUEST")
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).toContain(path)
  }
  expect((await settings("GET")).body).toEqual(patched.body)
  // The guided setup writes its two answers into the same settings.
  await http.server.request("POST", "/organization/setup/reviews", {
    token: own,
    body: { data: { autoPublish: false, autoPublishMinRating: 3 } }
  })
  expect((await settings("GET")).body).toEqual({
    autoPublish: false,
    autoPublishMinRating: 3,
    autoPublishVerifiedOnly: false
  })
  const { key: reader } = await http.server.provision({ permissions: ["settings:read"] })
  expect((await settings("PATCH", { autoPublish: true }, reader)).status).toBe(403)
  expect((await settings("GET", undefined, reader)).status).toBe(200)
})
