/**
 * Editing and deleting answers over HTTP (docs/DECISIONS.md §13): PATCH publishes a draft and the question becomes
 * answered; DELETE returns the answer; bad bodies and foreign ids are 400 and 404 in the envelope.
 */
import { expect, it } from "vitest"
import { useTestServer } from "./Http.ts"
import { makeTestServer } from "./TestServer.ts"

const { call } = useTestServer(() => makeTestServer())

it("publishes a draft answer by PATCH, hides it again, and deletes it", async () => {
  const product = await call("POST", "/products", { title: "Mug", slug: "answer-mug" })
  const question = await call("POST", "/product-questions", {
    productId: product.body.id,
    body: "Dishwasher safe?",
    askerEmail: "ada@example.com"
  })
  const draft = await call("POST", `/product-questions/${question.body.id}/answers`, { body: "Yes", published: false })
  expect(draft.status).toBe(201)
  const path = `/product-questions/${question.body.id}/answers/${draft.body.id}`

  const published = await call("PATCH", path, { published: true, authorName: "Support" })
  expect(published.status).toBe(200)
  expect(published.body).toMatchObject({ published: true, authorName: "Support", body: "Yes" })
  expect((await call("GET", `/product-questions?answered=true`)).body.data.map((q: { id: string }) => q.id)).toEqual([
    question.body.id
  ])
  const asked = await call("GET", `/product-questions/${question.body.id}`)
  expect(asked.body).toMatchObject({ answerCount: 1, publishedAnswerCount: 1 })
  expect(asked.body.answeredAt).not.toBeNull()

  for (
    const [body, field] of [[{ published: "yes" }, "body.published"], [{ body: "" }, "body.body"], [
      { flagged: true },
      "body.flagged"
    ]] as const
  ) {
    const bad = await call("PATCH", path, body)
    expect(bad.status).toBe(400)
    expect(bad.body.error.details.issues.map((i: { path: string }) => i.path)).toContain(field)
  }

  const deleted = await call("DELETE", path)
  expect(deleted.status).toBe(200)
  expect(deleted.body.id).toBe(draft.body.id)
  expect((await call("GET", `/product-questions/${question.body.id}`)).body).toMatchObject({
    answerCount: 0,
    publishedAnswerCount: 0,
    answeredAt: null
  })
  expect((await call("DELETE", path)).status).toBe(404)
  expect((await call("PATCH", `/product-questions/${question.body.id}/answers/not-a-uuid`, { body: "x" })).status).toBe(
    400
  )
})
