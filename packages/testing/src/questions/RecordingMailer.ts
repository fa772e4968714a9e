/**
 * TEST SUPPORT: a Mailer that records every message and answers with scripted results (default `Sent`).
 */
import { Effect, Layer } from "effect"
import { type EmailMessage, Mailer, type MailerResult } from "@feedback/core"

export interface RecordingMailer {
  /** Messages the transport was called with, in order (whatever it answered). */
  readonly calls: Array<EmailMessage>
  /** Messages answered `Sent`. */
  readonly sent: Array<EmailMessage>
  /** Results for the next calls, consumed in order; `Sent` once empty. */
  readonly script: Array<MailerResult>
  readonly layer: Layer.Layer<Mailer>
}

export const makeRecordingMailer = (script: ReadonlyArray<MailerResult> = []): RecordingMailer => {
  const calls: Array<EmailMessage> = []
  const sent: Array<EmailMessage> = []
  const queue = [...script]
  const layer = Layer.succeed(
    Mailer,
    Mailer.of({
      send: (message) =>
        Effect.sync(() => {
          calls.push(message)
          const result = queue.shift() ?? { _tag: "Sent" }
          if (result._tag === "Sent") sent.push(message)
          return result
        })
    })
  )
  return { calls, sent, script: queue, layer }
}
