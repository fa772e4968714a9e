/**
 * Where email goes (docs/DECISIONS.md §6). The core only renders messages and keeps the outbox; a host supplies the
 * transport: SMTP in the standalone server (`SMTP_URL`), the log when none is configured, a recording one in tests.
 *
 * A transport reports every outcome as a value, distinguishing what the worker must treat differently:
 * - `Sent`: the mail server accepted the message.
 * - `Logged`: no transport is configured; the message was written to the log, not delivered.
 * - `NotSent`: the message was certainly not accepted (no connection, or the server answered the message with an
 *   error). `permanent` for a 5xx answer; otherwise it may be retried.
 * - `Uncertain`: the server may or may not have accepted it (the connection broke or timed out after the message
 *   was transmitted). Never retried, so a notice is never sent twice.
 */
import { Context, Effect, Layer } from "effect"

export interface EmailMessage {
  /** Stable per notice, so a transport can derive a Message-ID from it. */
  readonly id: string
  readonly to: string
  readonly subject: string
  readonly text: string
}

export type MailerResult =
  | { readonly _tag: "Sent" }
  | { readonly _tag: "Logged" }
  | { readonly _tag: "NotSent"; readonly permanent: boolean; readonly error: string }
  | { readonly _tag: "Uncertain"; readonly error: string }

export class Mailer extends Context.Service<Mailer, {
  /** Must not fail: every outcome is a `MailerResult`. */
  readonly send: (message: EmailMessage) => Effect.Effect<MailerResult>
}>()("feedback/Mailer") {}

/** The transport of a server without SMTP: each message goes to the log, and the notice is marked `logged`. */
export const LoggingMailer = Layer.succeed(Mailer, Mailer.of({
  send: (message) =>
    Effect.logInfo("email not sent: no SMTP transport is configured (set SMTP_URL); logged instead").pipe(
      Effect.annotateLogs({ to: message.to, subject: message.subject, text: message.text }),
      Effect.as({ _tag: "Logged" } as const)
    )
}))
