/**
 * TEST SUPPORT: a Mailer that records every message and answers with scripted results (default `Sent`).
 */
import { Effect, Layer } from "effect"
import { Questions } from "@feedback/core"

export interface RecordingMailer {
  /** Messages the transport was called with, in order (whatever it answered). */
  readonly calls: Array<Questions.EmailMessage>
  /** Messages answered `Sent`. */
  readonly sent: Array<Questions.EmailMessage>
  /** Results for the next calls, consumed in order; `Sent` once empty. */
  readonly script: Array<Questions.MailerResult>
  readonly layer: Layer.Layer<Questions.Mailer>
}

export const makeRecordingMailer = (script: ReadonlyArray<Questions.MailerResult> = []): RecordingMailer => {
  const calls: Array<Questions.EmailMessage> = []
  const sent: Array<Questions.EmailMessage> = []
  const queue = [...script]
  const layer = Layer.succeed(
    Questions.Mailer,
    Questions.Mailer.of({
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
