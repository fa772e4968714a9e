/**
 * The server's mail transport: SMTP through nodemailer, configured by `SMTP_URL` (`smtp://user:pass@host:587`,
 * `smtps://…:465`; query options such as `?requireTLS=true` are nodemailer's) and `MAIL_FROM`. Without `SMTP_URL`
 * the server uses the core's `LoggingMailer` and notices are marked `logged`.
 *
 * Every send finishes by itself within the timeouts below (the notice worker runs it uninterruptibly so shutdown
 * waits for it), and every failure is classified for the worker (see `Mailer.ts`):
 * - the server answered with a reply code: `NotSent`, permanent for 5xx (except 503);
 * - the message was never transmitted (no DNS, connection refused, connect/greeting/TLS timeout, authentication or
 *   configuration error, an invalid address): `NotSent`, retryable (an invalid address is permanent);
 * - anything else (the connection broke or went silent while the message was being transmitted or acknowledged):
 *   `Uncertain`, never retried, so an asker never gets the same notice twice.
 * nodemailer is an optional peer, loaded when the mailer is built (`OptionalPackage.ts`).
 */
import { Questions } from "@feedback/core"
import { Effect, Layer, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { optionalPackage } from "../OptionalPackage.ts"
import { buildMessage } from "./MimeBuild.ts"

export interface SmtpSettings {
  readonly url: Redacted.Redacted<string>
  /** The From header, e.g. `Shop answers <answers@shop.example>`. */
  readonly from: string
  readonly connectionTimeoutMs?: number | undefined
  readonly greetingTimeoutMs?: number | undefined
  readonly socketTimeoutMs?: number | undefined
}

interface SendError {
  readonly code?: string | undefined
  readonly originalCode?: string | undefined
  readonly responseCode?: number | undefined
  readonly permanent?: boolean | undefined
  readonly timeoutType?: string | undefined
  readonly message?: string | undefined
}

const neverTransmitted = new Set([
  "EDNS",
  "ECONFIG",
  "EAUTH",
  "ENOAUTH",
  "ETLS",
  "EREQUIRETLS",
  "EENVELOPE",
  "EPROXY",
  "EOAUTH2"
])
const unreachable = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"])
const beforeMessageTimeouts = new Set(["CONNECT_TIMEOUT", "GREETING_TIMEOUT", "UPGRADE_TIMEOUT"])

/** How the worker must treat a nodemailer failure. Pure; exported for tests. */
export const classifySmtpError = (error: unknown): Questions.MailerResult => {
  const e = (typeof error === "object" && error !== null ? error : {}) as SendError
  const message = (e.message ?? String(error)).slice(0, 500)
  if (typeof e.responseCode === "number") {
    const permanent = e.permanent ?? (e.responseCode >= 500 && e.responseCode !== 503)
    return { _tag: "NotSent", permanent, error: message }
  }
  if (
    (e.code !== undefined && neverTransmitted.has(e.code)) ||
    (e.originalCode !== undefined && unreachable.has(e.originalCode)) ||
    (e.timeoutType !== undefined && beforeMessageTimeouts.has(e.timeoutType))
  ) {
    return { _tag: "NotSent", permanent: e.code === "EENVELOPE", error: message }
  }
  return { _tag: "Uncertain", error: message }
}

/** The domain of an address in a From header (`Name <a@b.c>` or `a@b.c`), for Message-IDs. */
const domainOf = (from: string): string => {
  const match = /@([^\s>]+)>?\s*$/.exec(from)
  return match?.[1] ?? "localhost"
}

export const SmtpMailer = (settings: SmtpSettings): Layer.Layer<Questions.Mailer> =>
  Layer.effect(
    Questions.Mailer,
    Effect.gen(function*() {
      const load = <A>(module: () => Promise<A>) => optionalPackage("nodemailer", "SMTP_URL (email over SMTP)", module)
      const [{ createTransport }, { default: MailComposer }, qp, base64] = yield* Effect.all([
        load(() => import("nodemailer")),
        load(() => import("nodemailer/lib/mail-composer")),
        load(() => import("nodemailer/lib/qp")),
        load(() => import("nodemailer/lib/base64"))
      ])
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() =>
          createTransport({
            url: Redacted.value(settings.url),
            connectionTimeout: settings.connectionTimeoutMs ?? 10_000,
            greetingTimeout: settings.greetingTimeoutMs ?? 10_000,
            socketTimeout: settings.socketTimeoutMs ?? 30_000
          })
        ),
        (t) => Effect.sync(() => t.close())
      )
      const messageDomain = domainOf(settings.from)
      return Questions.Mailer.of({
        send: (message) =>
          Effect.tryPromise(async () => {
            // The message nodemailer's `sendMail` would compose, built whole and in one pass first (`MimeBuild.ts`):
            // the pool then writes it as one buffer, not as a stream of MIME pieces (a socket write each).
            const node = new MailComposer({
              from: settings.from,
              to: message.to,
              subject: message.subject,
              text: message.text,
              // With an HTML part the message is multipart/alternative, the text part first (RFC 2046: least rich first).
              ...(message.html === undefined ? {} : { html: message.html }),
              // Stable per notice: should a copy ever be delivered twice, mail clients can tell it is the same.
              messageId: `<${message.id}@${messageDomain}>`,
              headers: { ...Questions.safeHeaders(message.headers), "Auto-Submitted": "auto-generated" },
              disableFileAccess: true,
              disableUrlAccess: true
            }).compile()
            const raw = buildMessage(node, { qp, base64 }) ?? await node.build()
            return transport.sendMail({
              envelope: node.getEnvelope(),
              raw,
              disableFileAccess: true,
              disableUrlAccess: true
            })
          }).pipe(
            Effect.map((): Questions.MailerResult => ({ _tag: "Sent" })),
            Effect.catch((failure) => Effect.succeed(classifySmtpError(failure.cause)))
          )
      })
    })
  )

/** SMTP when `url` is set, the log otherwise. */
export const mailerFor = (smtp: SmtpSettings | undefined): Layer.Layer<Questions.Mailer> =>
  smtp === undefined ? Questions.LoggingMailer : SmtpMailer(smtp)

/** A worker id unique per process: claims name the process that made them. */
export const workerIdOfProcess = (): string => `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`

/**
 * The email notice worker of a server process, with its transport: started with the server, stopped (after any
 * send in progress) with it. Needs the store services.
 */
export const EmailNoticeWorkerLive = (
  smtp: SmtpSettings | undefined,
  settings?: Partial<Questions.EmailWorkerSettings>
) =>
  Questions.EmailNoticeWorker({ ...Questions.defaultEmailWorkerSettings(workerIdOfProcess()), ...settings }).pipe(
    Layer.provide(mailerFor(smtp))
  )

export interface EmailServerOptions {
  /** SMTP transport; unset: notices are written to the log and marked `logged`. */
  readonly smtp?: SmtpSettings | undefined
  /** `false` starts no worker (the host runs `EmailNoticeWorkerLive` itself, or another process sends). */
  readonly worker?: false | Partial<Questions.EmailWorkerSettings> | undefined
}

/** The worker the API routes start with the server, per `ApiServerOptions.email`. */
export const EmailWorkerFor = (options: EmailServerOptions = {}) =>
  options.worker === false ? Layer.empty : EmailNoticeWorkerLive(options.smtp, options.worker)
