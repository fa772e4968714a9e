/**
 * A real SMTP server (`smtp-server`) on loopback for the tests that send email: it records each accepted message
 * (its envelope and raw text), and takes `delayMs` to accept one, so that sends overlap whatever the test does
 * meanwhile (a SIGKILL). `refuse` names the recipients it answers 550, as a mailbox that does not exist.
 */
import type { AddressInfo } from "node:net"
import { SMTPServer } from "smtp-server"

export interface ReceivedMessage {
  /** The envelope's recipients. */
  readonly to: ReadonlyArray<string>
  /** The envelope's sender ("" for a null sender). */
  readonly from: string
  /** The message as received: headers, a blank line, the body. */
  readonly raw: string
}

export interface SmtpReceiver {
  /** One entry per recipient of every accepted message, in acceptance order. */
  readonly received: ReadonlyArray<string>
  /** Every accepted message, in acceptance order. */
  readonly messages: ReadonlyArray<ReceivedMessage>
  /** `smtp://127.0.0.1:<port>`, for `SMTP_URL`. */
  readonly url: string
  readonly close: () => Promise<void>
}

export const startSmtpReceiver = async (
  delayMs = 0,
  options: { readonly refuse?: (address: string) => boolean } = {}
): Promise<SmtpReceiver> => {
  const received: Array<string> = []
  const messages: Array<ReceivedMessage> = []
  const refuse = options.refuse ?? (() => false)
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onRcptTo: (address, _session, callback) =>
      refuse(address.address)
        ? callback(Object.assign(new Error("No such user"), { responseCode: 550 }))
        : callback(),
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        setTimeout(() => {
          const to = session.envelope.rcptTo.map((r) => r.address)
          for (const address of to) received.push(address)
          const from = session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address
          messages.push({ to, from, raw: Buffer.concat(chunks).toString("utf8") })
          callback()
        }, delayMs)
      })
    }
  })
  // A sender killed mid-message (the kill tests) resets its connection: an expected end of that session, not a
  // failure of the receiver, whose unhandled "error" event would otherwise be thrown.
  server.on("error", () => {})
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.server.address() as AddressInfo).port
  return {
    received,
    messages,
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
