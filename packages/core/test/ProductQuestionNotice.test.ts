import { describe, expect, it } from "vitest"
import { type Kernel, Questions } from "@feedback/core"

const at = "2026-01-01T00:00:00.000Z" as Kernel.Timestamp.Timestamp
const question = {
  body: "Is it dishwasher safe?",
  askerName: "Ada",
  askerEmail: "ada@example.com",
  notifyByEmail: true,
  publishedAnswerCount: 0
} as Questions.ProductQuestionRecord

describe("the answer notice", () => {
  it("is due for the first published answer to a question with an address and consent only", () => {
    expect(Questions.shouldNotifyAsker(question, { published: true })).toBe(true)
    expect(Questions.shouldNotifyAsker(question, { published: false })).toBe(false)
    expect(Questions.shouldNotifyAsker({ ...question, publishedAnswerCount: 1 }, { published: true })).toBe(false)
    expect(Questions.shouldNotifyAsker({ ...question, askerEmail: null }, { published: true })).toBe(false)
    expect(Questions.shouldNotifyAsker({ ...question, notifyByEmail: false }, { published: true })).toBe(false)
  })

  it("keeps the subject one header line, whatever the product title holds", () => {
    const { subject, text } = Questions.renderAnswerNotice({
      organizationName: "Mug shop",
      productTitle: "Mug\r\nBcc: victim@example.com",
      productUrl: null,
      question,
      answer: { body: "Yes.\nUp to 70 °C.", authorName: null }
    })
    expect(subject).not.toMatch(/[\r\n]/)
    expect(subject).toContain("Mug shop")
    expect(text).toContain("Is it dishwasher safe?")
    expect(text).toContain("  Yes.\n  Up to 70 °C.")
    expect(text).toContain("Mug shop answered:")
    expect(text).toContain("Hello Ada,")
  })

  it("anonymous askers get a plain greeting; the product link appears when known", () => {
    const { text } = Questions.renderAnswerNotice({
      organizationName: "Mug shop",
      productTitle: "Mug",
      productUrl: "https://shop.example/mug",
      question: { ...question, askerName: null },
      answer: { body: "Yes", authorName: "Support" }
    })
    expect(text.startsWith("Hello,\n")).toBe(true)
    expect(text).toContain("Support answered:")
    expect(text).toContain("https://shop.example/mug")
  })
})

describe("what a worker records after the transport answered", () => {
  const settings = { maxAttempts: 3, retryBaseMs: 1_000 }
  it("sent, logged and uncertain are final; not-sent retries with doubling back-off until the attempts run out", () => {
    expect(Questions.completionFor({ _tag: "Sent" }, 1, at, settings).status).toBe("sent")
    expect(Questions.completionFor({ _tag: "Logged" }, 1, at, settings).status).toBe("logged")
    expect(Questions.completionFor({ _tag: "Uncertain", error: "reset" }, 1, at, settings).status).toBe("failed")
    expect(Questions.completionFor({ _tag: "NotSent", permanent: true, error: "550" }, 1, at, settings).status).toBe(
      "failed"
    )
    expect(Questions.completionFor({ _tag: "NotSent", permanent: false, error: "421" }, 1, at, settings)).toMatchObject(
      {
        status: "pending",
        nextAttemptAt: "2026-01-01T00:00:01.000Z"
      }
    )
    expect(Questions.completionFor({ _tag: "NotSent", permanent: false, error: "421" }, 2, at, settings)).toMatchObject(
      {
        status: "pending",
        nextAttemptAt: "2026-01-01T00:00:02.000Z"
      }
    )
    expect(Questions.completionFor({ _tag: "NotSent", permanent: false, error: "421" }, 3, at, settings).status).toBe(
      "failed"
    )
  })
})
