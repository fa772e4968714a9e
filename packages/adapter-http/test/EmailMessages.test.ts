/**
 * The message shape of review emails through the server's transports: an HTML part with its plain-text alternative
 * and the `List-Unsubscribe` headers (RFC 2369, RFC 8058), through nodemailer to a real SMTP server (`smtp-server`)
 * on loopback, and into the log when no SMTP server is configured. Asker notices (text only) keep their shape.
 */
import { Questions } from "@feedback/core"
import { Effect, Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { JsonLoggerLayer } from "../src/server/observability/JsonLogger.ts"
import { buildMessage } from "../src/server/questions/MimeBuild.ts"
import { SmtpMailer } from "../src/server/questions/SmtpMailer.ts"
import { type SmtpReceiver, startSmtpReceiver } from "./SmtpReceiver.ts"

const unsubscribeUrl = "https://api.shop.example/u/AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde"

const review: Questions.EmailMessage = Questions.unsubscribableMessage(
  "0192f0d4-aaaa-7bbb-8ccc-000000000001",
  "ada@example.com",
  {
    subject: "How was your order, Ada?",
    text: "Hi Ada,\n\nWrite your review (https://api.shop.example/r/token)\n\nUnsubscribe (" + unsubscribeUrl + ")",
    html:
      "<!DOCTYPE html><html><body><p>Hi Ada, café ☕</p><a href=\"https://api.shop.example/r/token\">Write your review</a></body></html>"
  },
  unsubscribeUrl
)

const notice: Questions.EmailMessage = {
  id: "0192f0d4-aaaa-7bbb-8ccc-000000000002",
  to: "asker@example.com",
  subject: "Your question was answered",
  text: "Hello,\nyour question was answered."
}

const unfold = (headers: string) => headers.replace(/\r\n[ \t]+/g, " ")
const headerOf = (headers: string, name: string): string | undefined =>
  new RegExp(`^${name}:\\s*(.*)$`, "im").exec(unfold(headers))?.[1]

const decodePart = (headers: string, body: string): string => {
  if (/content-transfer-encoding:\s*quoted-printable/i.test(headers)) {
    const bytes = body.replace(/=\r\n/g, "").replace(
      /=([0-9A-F]{2})/g,
      (_, h: string) => String.fromCharCode(parseInt(h, 16))
    )
    return Buffer.from(bytes, "latin1").toString("utf8").replace(/\r\n/g, "\n")
  }
  if (/content-transfer-encoding:\s*base64/i.test(headers)) {
    return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8")
  }
  return body.replace(/\r\n/g, "\n")
}

/** The top-level headers and each part's content type and decoded body (one level of multipart). */
const parse = (raw: string) => {
  const split = raw.indexOf("\r\n\r\n")
  const headers = raw.slice(0, split)
  const body = raw.slice(split + 4)
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(unfold(headers))?.[1]
  if (boundary === undefined) {
    return {
      headers,
      parts: [{ type: headerOf(headers, "Content-Type") ?? "", body: decodePart(headers, body).trim() }]
    }
  }
  const parts = body.split(`--${boundary}`).slice(1, -1).map((chunk) => {
    const trimmed = chunk.replace(/^\r\n/, "")
    const at = trimmed.indexOf("\r\n\r\n")
    const partHeaders = trimmed.slice(0, at)
    return {
      type: headerOf(partHeaders, "Content-Type") ?? "",
      body: decodePart(partHeaders, trimmed.slice(at + 4)).trim()
    }
  })
  return { headers, parts }
}

describe("the message shape through SMTP", () => {
  let smtp: SmtpReceiver
  beforeAll(async () => {
    smtp = await startSmtpReceiver()
  })
  afterAll(() => smtp.close())

  const send = (message: Questions.EmailMessage) =>
    Effect.runPromise(
      Questions.Mailer.use((m) => m.send(message)).pipe(
        Effect.provide(
          SmtpMailer({ url: Redacted.make(smtp.url), from: "Acme <reviews@shop.example>" })
        ),
        Effect.scoped
      )
    )

  it("a review email is multipart/alternative, text then HTML, with List-Unsubscribe and its one-click companion", async () => {
    const before = smtp.messages.length
    expect(await send(review)).toEqual({ _tag: "Sent" })
    expect(smtp.messages.length).toBe(before + 1)
    const { headers, parts } = parse(smtp.messages[before]!.raw)
    expect(headerOf(headers, "Content-Type")).toMatch(/^multipart\/alternative/)
    expect(headerOf(headers, "List-Unsubscribe")).toBe(`<${unsubscribeUrl}>`)
    expect(headerOf(headers, "List-Unsubscribe-Post")).toBe("List-Unsubscribe=One-Click")
    expect(headerOf(headers, "Auto-Submitted")).toBe("auto-generated")
    expect(headerOf(headers, "Message-ID")).toBe(`<${review.id}@shop.example>`)
    expect(parts.map((p) => p.type.split(";")[0])).toEqual(["text/plain", "text/html"])
    expect(parts[0]!.body).toBe(review.text)
    expect(parts[1]!.body).toBe(review.html)
  })

  it("an asker notice keeps its shape: one text/plain part, no List-Unsubscribe", async () => {
    const before = smtp.messages.length
    expect(await send(notice)).toEqual({ _tag: "Sent" })
    const { headers, parts } = parse(smtp.messages[before]!.raw)
    expect(headerOf(headers, "Content-Type")).toMatch(/^text\/plain/)
    expect(headerOf(headers, "List-Unsubscribe")).toBeUndefined()
    expect(parts).toEqual([{ type: expect.stringMatching(/^text\/plain/), body: notice.text }])
  })

  it("headers that are not single lines, or whose names are not tokens, are not passed on", async () => {
    const before = smtp.messages.length
    await send({
      ...notice,
      headers: { "X-Ok": "fine", "X-Bad": "a\r\nBcc: victim@example.com", "Bad Name": "x", "Auto-Submitted": "no" }
    })
    const { headers } = parse(smtp.messages[before]!.raw)
    expect(headerOf(headers, "X-Ok")).toBe("fine")
    expect(headerOf(headers, "X-Bad")).toBeUndefined()
    expect(headerOf(headers, "Bcc")).toBeUndefined()
    // The transport's own header wins.
    expect(headerOf(headers, "Auto-Submitted")).toBe("auto-generated")
  })
})

describe("without SMTP", () => {
  it("the log gets the message: text, HTML and the headers; an asker notice logs as before", async () => {
    const lines: Array<string> = []
    const logged = (message: Questions.EmailMessage) =>
      Effect.runPromise(
        Questions.Mailer.use((m) => m.send(message)).pipe(Effect.provide(Layer.merge(
          Questions.LoggingMailer,
          JsonLoggerLayer((line) => lines.push(line))
        )))
      )
    expect(await logged(review)).toEqual({ _tag: "Logged" })
    expect(await logged(notice)).toEqual({ _tag: "Logged" })
    const [first, second] = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(first).toMatchObject({
      to: review.to,
      subject: review.subject,
      text: review.text,
      html: review.html,
      headers: review.headers
    })
    expect(second).toMatchObject({ to: notice.to, subject: notice.subject, text: notice.text })
    expect(second).not.toHaveProperty("html")
    expect(second).not.toHaveProperty("headers")
  })

  it("listUnsubscribeHeaders and safeHeaders keep every header a single line", () => {
    expect(Questions.listUnsubscribeHeaders("https://x.example/u/abc\r\nBcc: y")).toEqual({
      "List-Unsubscribe": "<https://x.example/u/abcBcc: y>",
      "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"
    })
    expect(Questions.safeHeaders({ "A": "1", "B\n": "2", "C": "3\n" })).toEqual({ A: "1" })
  })

  it("the one-pass build writes byte for byte the message nodemailer's own build writes", async () => {
    const { default: MailComposer } = await import("nodemailer/lib/mail-composer")
    const qp = await import("nodemailer/lib/qp")
    const base64 = await import("nodemailer/lib/base64")
    const long = "A line much longer than seventy-six characters, so that it is wrapped with soft line breaks; ".repeat(
      3
    )
    const cases = [
      { text: review.text, html: review.html, subject: "Café ☕, José — how was it?" },
      { text: `${long}\n\nç`.repeat(20), html: `<p>${long}</p>`, subject: "Plain" },
      // Mostly outside ASCII: nodemailer picks base64 for these.
      { text: "日本語のテキスト。".repeat(40), html: "<p>日本語</p>".repeat(40), subject: "件名" },
      { text: "ascii only, short lines\nsecond line", subject: "7bit" }
    ]
    for (const c of cases) {
      const node = new MailComposer({
        from: "Acme Café <reviews@shop.example>",
        to: "ada@example.com",
        messageId: "<x@shop.example>",
        headers: { ...review.headers, "Auto-Submitted": "auto-generated" },
        ...c
      }).compile()
      const ours = buildMessage(node, { qp, base64 })
      expect(ours).toBeDefined()
      // The headers (Date, boundary) were fixed by the first build: the second writes the same message.
      expect(ours!.toString("latin1")).toBe((await node.build()).toString("latin1"))
    }
    expect(buildMessage(new MailComposer({ text: "x", raw: "Subject: raw\r\n\r\nx" }).compile(), { qp, base64 }))
      .toBeUndefined()
  })
})
