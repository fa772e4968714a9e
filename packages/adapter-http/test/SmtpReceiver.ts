/**
 * A real SMTP server (`smtp-server`) on loopback for process tests: it records each accepted message's recipients,
 * and takes `delayMs` to accept one, so that sends overlap whatever the test does meanwhile (a SIGKILL).
 */
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

export interface SmtpReceiver {
  /** One entry per recipient of every accepted message, in acceptance order. */
  readonly received: ReadonlyArray<string>
  /** `smtp://127.0.0.1:<port>`, for `SMTP_URL`. */
  readonly url: string
  readonly close: () => Promise<void>
}

export const startSmtpReceiver = async (delayMs = 0): Promise<SmtpReceiver> => {
  const received: Array<string> = []
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onData: (stream, session, callback) => {
      stream.on("data", () => undefined)
      stream.on("end", () => {
        setTimeout(() => {
          for (const r of session.envelope.rcptTo) received.push(r.address)
          callback()
        }, delayMs)
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.server.address() as AddressInfo).port
  return {
    received,
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
