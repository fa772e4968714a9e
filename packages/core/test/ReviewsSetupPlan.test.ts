import { Result, Schema } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { EmailTemplateId } from "../src/kernel/Ids.ts"
import { type EmailVariables, renderEmail, templateIssues } from "../src/setup/EmailTemplates.ts"
import {
  bindTemplateIds,
  decodeReviewsSetupAnswers,
  EmailTemplate,
  planReviewsSetup,
  type ReviewsSetupAnswers,
  ReviewsSetupAnswers as AnswersSchema,
  SurveyFlow
} from "../src/setup/ReviewsSetupPlan.ts"

const decode = (u: unknown): ReviewsSetupAnswers => {
  const r = decodeReviewsSetupAnswers(u)
  if (Result.isFailure(r)) throw new Error(`expected success, got: ${r.failure.message}`)
  return r.success
}
const failure = (u: unknown): string => {
  const r = decodeReviewsSetupAnswers(u)
  if (Result.isSuccess(r)) {
    throw new Error(`expected failure for ${JSON.stringify(u)}, got ${JSON.stringify(r.success)}`)
  }
  return r.failure.message
}

const defaults: ReviewsSetupAnswers = {
  triggerEvent: "order.fulfilled",
  delayDays: 14,
  reminder: false,
  reminderDelayDays: 7,
  template: "standard",
  autoPublish: false,
  autoPublishMinRating: 4
}

const arbAnswers: fc.Arbitrary<ReviewsSetupAnswers> = fc.record({
  triggerEvent: fc.constantFrom("order.created", "order.fulfilled", "order.delivered"),
  delayDays: fc.integer({ min: 0, max: 365 }),
  reminder: fc.boolean(),
  reminderDelayDays: fc.integer({ min: 1, max: 365 }),
  template: fc.constantFrom("standard", "minimal", "photo"),
  autoPublish: fc.boolean(),
  autoPublishMinRating: fc.integer({ min: 1, max: 5 })
})

describe("ReviewsSetupAnswers", () => {
  it("decoding {} gives every default", () => {
    expect(decode({})).toEqual(defaults)
    // The plain schema (no parse options) applies the same defaults.
    expect(Schema.decodeUnknownSync(AnswersSchema)({})).toEqual(defaults)
  })

  it("keeps sent values and defaults the rest", () => {
    expect(decode({ delayDays: 0, template: "photo", reminder: true })).toEqual({
      ...defaults,
      delayDays: 0,
      template: "photo",
      reminder: true
    })
  })

  it("accepts the bounds", () => {
    expect(decode({ delayDays: 365, reminderDelayDays: 1, autoPublishMinRating: 1 })).toMatchObject({
      delayDays: 365,
      reminderDelayDays: 1,
      autoPublishMinRating: 1
    })
    expect(decode({ reminderDelayDays: 365, autoPublishMinRating: 5 })).toMatchObject({
      reminderDelayDays: 365,
      autoPublishMinRating: 5
    })
  })

  const rejected: ReadonlyArray<readonly [string, unknown, string]> = [
    ["delayDays -1", { delayDays: -1 }, "delayDays"],
    ["delayDays 366", { delayDays: 366 }, "delayDays"],
    ["delayDays 1.5", { delayDays: 1.5 }, "delayDays"],
    ["delayDays as a string", { delayDays: "14" }, "delayDays"],
    ["delayDays null", { delayDays: null }, "delayDays"],
    ["reminderDelayDays 0", { reminderDelayDays: 0 }, "reminderDelayDays"],
    ["reminderDelayDays 366", { reminderDelayDays: 366 }, "reminderDelayDays"],
    ["autoPublishMinRating 0", { autoPublishMinRating: 0 }, "autoPublishMinRating"],
    ["autoPublishMinRating 6", { autoPublishMinRating: 6 }, "autoPublishMinRating"],
    ["a bad triggerEvent", { triggerEvent: "order.paid" }, "triggerEvent"],
    ["a bad template", { template: "fancy" }, "template"],
    ["reminder as a string", { reminder: "yes" }, "reminder"],
    ["autoPublish as a number", { autoPublish: 1 }, "autoPublish"],
    ["an unknown key", { delaydays: 3 }, "delaydays"],
    ["not an object", [], ""]
  ]
  it.each(rejected)("rejects %s", (_name, input, path) => {
    const message = failure(input)
    if (path !== "") expect(message).toContain(`["${path}"]`)
  })

  it("unknown keys are a parse option, not part of the plain schema", () => {
    // Documents why callers must decode with decodeReviewsSetupAnswers.
    expect(Schema.decodeUnknownSync(AnswersSchema)({ delaydays: 3 })).toEqual(defaults)
    expect(failure({ delaydays: 3 })).toContain("excess")
  })

  it("reports every issue at once", () => {
    const message = failure({ delayDays: -1, template: "fancy", extra: true })
    expect(message).toContain(`["delayDays"]`)
    expect(message).toContain(`["template"]`)
    expect(message).toContain(`["extra"]`)
  })
})

describe("planReviewsSetup", () => {
  it("defaults: one request template and a wait → email flow on order.fulfilled after 14 days", () => {
    const plan = planReviewsSetup(defaults)
    expect(plan.emailTemplates.map((t) => [t.key, t.type])).toEqual([["request", "reviewRequest"]])
    expect(plan.surveyFlow).toMatchObject({ isActive: true, triggerEvent: "order.fulfilled", condition: "" })
    expect(plan.surveyFlow.steps).toEqual([
      { type: "wait", position: 0, waitSeconds: 14 * 86_400 },
      { type: "email", position: 1, emailTemplateKey: "request" }
    ])
    expect(plan.surveyFlow.name).toContain("14 days")
    expect(plan.autoPublish).toEqual({ autoPublish: false, autoPublishMinRating: 4 })
  })

  it("reminder: two templates and four steps with the right waits", () => {
    const plan = planReviewsSetup({
      ...defaults,
      triggerEvent: "order.delivered",
      delayDays: 3,
      reminder: true,
      reminderDelayDays: 5,
      autoPublish: true,
      autoPublishMinRating: 5
    })
    expect(plan.emailTemplates.map((t) => [t.key, t.type])).toEqual([
      ["request", "reviewRequest"],
      ["reminder", "reviewReminder"]
    ])
    expect(plan.surveyFlow.triggerEvent).toBe("order.delivered")
    expect(plan.surveyFlow.steps).toEqual([
      { type: "wait", position: 0, waitSeconds: 3 * 86_400 },
      { type: "email", position: 1, emailTemplateKey: "request" },
      { type: "wait", position: 2, waitSeconds: 5 * 86_400 },
      { type: "email", position: 3, emailTemplateKey: "reminder" }
    ])
    expect(plan.autoPublish).toEqual({ autoPublish: true, autoPublishMinRating: 5 })
  })

  it("delayDays 0 still plans a zero wait, so every flow has the same shape", () => {
    expect(planReviewsSetup({ ...defaults, delayDays: 0 }).surveyFlow.steps[0])
      .toEqual({ type: "wait", position: 0, waitSeconds: 0 })
  })

  it("for any answers: placeholders in every body, steps well formed, every key has a template", () => {
    fc.assert(
      fc.property(arbAnswers, (answers) => {
        const plan = planReviewsSetup(answers)
        expect(plan.emailTemplates).toHaveLength(answers.reminder ? 2 : 1)
        for (const t of plan.emailTemplates) {
          // Valid Liquid, so the setup never stores a template that PATCH would refuse.
          expect(templateIssues(t)).toEqual([])
          for (const v of ["survey.url", "unsubscribe.url", "products", "organization.name"]) {
            expect(t.body).toContain(v)
          }
          expect(t.subject.length).toBeGreaterThan(0)
          expect(t.name.length).toBeGreaterThan(0)
          // Only documented variables, so the renderer fills everything the emails use.
          for (const used of `${t.subject}\n${t.body}`.match(/\{\{\s*([a-zA-Z]+)/g) ?? []) {
            expect(["organization", "customer", "order", "product", "survey", "unsubscribe"]).toContain(
              used.replace(/\{\{\s*/, "")
            )
          }
        }
        const steps = plan.surveyFlow.steps
        expect(steps.map((s) => s.position)).toEqual(steps.map((_, i) => i))
        expect(steps.map((s) => s.type)).toEqual(
          answers.reminder ? ["wait", "email", "wait", "email"] : ["wait", "email"]
        )
        const waits = steps.flatMap((s) => (s.type === "wait" ? [s.waitSeconds] : []))
        expect(waits).toEqual(
          answers.reminder
            ? [answers.delayDays * 86_400, answers.reminderDelayDays * 86_400]
            : [answers.delayDays * 86_400]
        )
        const keys = plan.emailTemplates.map((t) => t.key)
        for (const s of steps) if (s.type === "email") expect(keys).toContain(s.emailTemplateKey)
        expect(plan.surveyFlow.isActive).toBe(true)
        expect(plan.surveyFlow.triggerEvent).toBe(answers.triggerEvent)
        expect(plan.autoPublish).toEqual({
          autoPublish: answers.autoPublish,
          autoPublishMinRating: answers.autoPublishMinRating
        })
      }),
      { numRuns: 200 }
    )
  })

  it("template styles differ as promised", () => {
    const texts = (template: ReviewsSetupAnswers["template"]) =>
      planReviewsSetup({ ...defaults, reminder: true, template }).emailTemplates.map((t) => render(t).text)
    for (const t of texts("photo")) expect(t.toLowerCase()).toContain("photo")
    for (const t of texts("standard")) expect(t.toLowerCase()).not.toContain("photo")
    const standard = texts("standard")
    texts("minimal").forEach((t, i) => expect(t.length).toBeLessThan(standard[i]!.length))
    // The reminder is a different email from the request.
    const [request, reminder] = standard
    expect(reminder).not.toBe(request)
  })

  it("every planned email renders as HTML with a readable plain-text part: greeting, products, survey and unsubscribe links", () => {
    for (const template of ["standard", "minimal", "photo"] as const) {
      for (const t of planReviewsSetup({ ...defaults, reminder: true, template }).emailTemplates) {
        const email = render(t)
        expect(email.html).toMatch(/^<!DOCTYPE html>/)
        expect(email.html).toContain(`href="${sample.survey.url}"`)
        expect(email.html).toContain(`href="${sample.unsubscribe.url}"`)
        expect(email.html).toContain(`<img src="${sample.products[0]!.imageUrl}"`)
        expect(email.html).toContain("Tea &amp; towel")
        expect(email.text).toContain(`(${sample.survey.url})`)
        expect(email.text).toContain(`Unsubscribe from review requests (${sample.unsubscribe.url})`)
        expect(email.text).toContain("Everyday mug")
        expect(email.text).toContain("Tea & towel")
        expect(email.text).toContain("order 1001")
        expect(email.text).not.toMatch(/[<>{}]/)
        expect(email.subject).not.toContain("{")
      }
    }
    const standard = render(planReviewsSetup(defaults).emailTemplates[0]!)
    expect(standard.subject).toBe("How was your order, Ada?")
    expect(standard.text).toMatch(/^Acme\n\nHi Ada,\n\nThank you for shopping with Acme\./)
    const anonymous = render(planReviewsSetup(defaults).emailTemplates[0]!, {
      ...sample,
      customer: { firstName: null, lastName: null, email: null }
    })
    expect(anonymous.subject).toBe("How was your order?")
    expect(anonymous.text).toContain("Hi there,")
  })
})

describe("the planned emails for any customer and order", () => {
  const text = fc.string({ maxLength: 80 })
  const maybe = fc.option(text, { nil: null })
  const url = fc.webUrl()
  const arbVariables: fc.Arbitrary<EmailVariables> = fc.record({
    organization: fc.record({ name: text }),
    customer: fc.record({ firstName: maybe, lastName: maybe, email: maybe }),
    order: fc.record({
      orderNumber: maybe,
      placedAt: fc.option(
        fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString()),
        { nil: null }
      )
    }),
    products: fc.array(
      fc.record({ title: text, url: fc.option(url, { nil: null }), imageUrl: fc.option(url, { nil: null }) }),
      { maxLength: 20 }
    ),
    survey: fc.record({ url }),
    unsubscribe: fc.record({ url })
  })

  it("property: every style renders, carries both links, and no variable value becomes markup", () => {
    const templates = (["standard", "minimal", "photo"] as const).flatMap((template) =>
      planReviewsSetup({ ...defaults, reminder: true, template }).emailTemplates
    )
    fc.assert(
      fc.property(arbVariables, fc.constantFrom(...templates), (variables, template) => {
        const email = render(template, variables)
        const attribute = (value: string) =>
          value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/'/g, "&#39;").replace(/</g, "&lt;").replace(
            />/g,
            "&gt;"
          )
        expect(email.html).toContain(`href="${attribute(variables.survey.url)}"`)
        expect(email.html).toContain(`href="${attribute(variables.unsubscribe.url)}"`)
        expect(email.text).toContain(variables.unsubscribe.url)
        expect(email.subject).not.toMatch(/[\r\n]/)
        // The only elements are the layout's own: a customer's name or a product title never adds one.
        const tags = new Set([...email.html.matchAll(/<([a-zA-Z][a-zA-Z0-9]*)/g)].map((m) => m[1]!.toLowerCase()))
        for (const tag of tags) {
          expect(["html", "head", "meta", "title", "body", "table", "tr", "td", "h1", "p", "a", "img", "br"]).toContain(
            tag
          )
        }
      }),
      { numRuns: 150 }
    )
  })
})

const sample: EmailVariables = {
  organization: { name: "Acme" },
  customer: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" },
  order: { orderNumber: "1001", placedAt: "2026-03-01T10:00:00.000Z" },
  products: [
    { title: "Everyday mug", url: "https://shop.example/mug", imageUrl: "https://cdn.example/mug.jpg" },
    { title: "Tea & towel", url: null, imageUrl: null }
  ],
  survey: { url: "https://api.example/r/abcdefghijklmnopqrstuv" },
  unsubscribe: { url: "https://api.example/u/ABCDEFGHIJKLMNOPQRSTUV" }
}

const render = (template: { readonly subject: string; readonly body: string }, variables: EmailVariables = sample) => {
  const result = renderEmail(template, variables)
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return result.success
}

describe("records", () => {
  const requestId = EmailTemplateId.make("4f8a7d8e-6a59-4a2c-9a8e-1f2b3c4d5e6f")
  const reminderId = EmailTemplateId.make("0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9")

  it("bindTemplateIds puts each created template's id on its email step", () => {
    const plan = planReviewsSetup({ ...defaults, reminder: true })
    expect(bindTemplateIds(plan.surveyFlow.steps, { request: requestId, reminder: reminderId })).toEqual([
      { type: "wait", position: 0, emailTemplateId: null, url: null, waitSeconds: 14 * 86_400 },
      { type: "email", position: 1, emailTemplateId: requestId, url: null, waitSeconds: null },
      { type: "wait", position: 2, emailTemplateId: null, url: null, waitSeconds: 7 * 86_400 },
      { type: "email", position: 3, emailTemplateId: reminderId, url: null, waitSeconds: null }
    ])
    expect(() => bindTemplateIds(plan.surveyFlow.steps, { request: requestId })).toThrow(/reminder/)
  })

  it("a flow and templates built from a plan fit the record schemas", () => {
    const plan = planReviewsSetup({ ...defaults, reminder: true, template: "minimal" })
    const now = "2026-01-01T00:00:00.000Z"
    const ids = { request: requestId, reminder: reminderId }
    const templates = plan.emailTemplates.map(({ key, ...t }) => ({
      id: ids[key],
      ...t,
      createdAt: now,
      updatedAt: now
    }))
    for (const t of templates) {
      expect(Schema.decodeUnknownSync(EmailTemplate)(t, { onExcessProperty: "error" })).toEqual(t)
    }
    const flow = {
      id: "9d3e1a52-7b44-4c1f-8f0e-2a6b5c4d3e2f",
      name: plan.surveyFlow.name,
      isActive: plan.surveyFlow.isActive,
      triggerEvent: plan.surveyFlow.triggerEvent,
      condition: plan.surveyFlow.condition,
      steps: bindTemplateIds(plan.surveyFlow.steps, ids).map((s, i) => ({
        id: `00000000-0000-4000-8000-00000000000${i}`,
        ...s
      })),
      metadata: {},
      createdAt: now,
      updatedAt: now
    }
    expect(Schema.decodeUnknownSync(SurveyFlow)(flow, { onExcessProperty: "error" })).toEqual(flow)
    expect(() => Schema.decodeUnknownSync(SurveyFlow)({ ...flow, id: "not-a-uuid" })).toThrow()
    expect(() => Schema.decodeUnknownSync(SurveyFlow)({ ...flow, createdAt: "yesterday" })).toThrow()
  })
})
