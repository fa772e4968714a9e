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
  /** The plain-text part (the only part of an asker notice). */
  readonly text: string
  /** The HTML alternative of `text`, when the message has one (review requests). */
  readonly html?: string | undefined
  /**
   * Headers beside those the transport sets (From, To, Subject, Message-ID, Auto-Submitted), e.g. the
   * `List-Unsubscribe` pair of `listUnsubscribeHeaders`. Names and values are single lines.
   */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * The headers that give a mail client its own unsubscribe button (RFC 2369) working in one click (RFC 8058: the
 * client POSTs `List-Unsubscribe=One-Click` to the URL). The URL must be https in production for the one-click
 * form to be honoured by the large mailbox providers.
 */
export const listUnsubscribeHeaders = (unsubscribeUrl: string): Readonly<Record<string, string>> => ({
  "List-Unsubscribe": `<${unsubscribeUrl.replace(/[\r\n<>]/g, "")}>`,
  "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"
})

/** Headers a transport may pass on: names are tokens, values single lines (no header can be smuggled in). */
export const safeHeaders = (headers: Readonly<Record<string, string>> | undefined): Record<string, string> => {
  const kept: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (/^[A-Za-z0-9-]{1,76}$/.test(name) && !/[\r\n]/.test(value)) kept[name] = value
  }
  return kept
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
export const LoggingMailer = Layer.succeed(
  Mailer,
  Mailer.of({
    send: (message) =>
      Effect.logInfo("email not sent: no SMTP transport is configured (set SMTP_URL); logged instead").pipe(
        Effect.annotateLogs({
          to: message.to,
          subject: message.subject,
          text: message.text,
          ...(message.headers === undefined ? {} : { headers: safeHeaders(message.headers) }),
          ...(message.html === undefined ? {} : { html: message.html })
        }),
        Effect.as({ _tag: "Logged" } as const)
      )
  })
)

/**
 * A rendered review email (`renderEmail`) as a message: both parts, and the unsubscribe headers every review email
 * carries (shared DECISIONS §17). `id` is stable per email step, so a transport's Message-ID is too.
 */
export const unsubscribableMessage = (
  id: string,
  to: string,
  email: { readonly subject: string; readonly html: string; readonly text: string },
  unsubscribeUrl: string
): EmailMessage => ({
  id,
  to,
  subject: email.subject,
  text: email.text,
  html: email.html,
  headers: listUnsubscribeHeaders(unsubscribeUrl)
})
