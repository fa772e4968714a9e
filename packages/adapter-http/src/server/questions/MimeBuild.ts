/**
 * A composed message (`MailComposer.compile()`: nodemailer's tree of MIME nodes, with its headers, boundaries and
 * transfer encodings) written out in one synchronous pass, the content encoded by nodemailer's own encoders, instead
 * of through its chain of streams. Composing through the streams cost the transport more than sending.
 *
 * Only nodes whose content is a string or a Buffer are written here (every message this server sends); any other
 * (a stream, a file, a URL) answers `undefined`, and the caller has nodemailer build the message.
 */
import type MimeNode from "nodemailer/lib/mime-node"

/** Nodemailer's quoted-printable and base64 encoders (`nodemailer/lib/qp`, `nodemailer/lib/base64`). */
export interface MimeEncoders {
  readonly qp: {
    readonly encode: (content: Buffer | string) => string
    readonly wrap: (s: string, n?: number) => string
  }
  readonly base64: {
    readonly encode: (content: Buffer | string) => string
    readonly wrap: (s: string, n?: number | false) => string
  }
}

const LINE_LENGTH = 76

const encodeContent = (content: string | Buffer, transferEncoding: string | false, encoders: MimeEncoders) => {
  switch (transferEncoding) {
    case "quoted-printable":
      return encoders.qp.wrap(encoders.qp.encode(content), LINE_LENGTH)
    case "base64":
      return encoders.base64.wrap(encoders.base64.encode(content), LINE_LENGTH)
    default:
      return typeof content === "string" ? content : content.toString("utf8")
  }
}

/** The message of `root` as `root.build()` would write it, or undefined when a node's content is not in memory. */
export const buildMessage = (root: MimeNode, encoders: MimeEncoders): Buffer | undefined => {
  const out: Array<string> = []
  const write = (node: MimeNode): boolean => {
    const content = node.content
    if (content !== undefined && typeof content !== "string" && !Buffer.isBuffer(content)) return false
    // A raw node, or stages nodemailer would run the output through, are left to nodemailer.
    const internals = node as unknown as {
      _raw?: unknown
      _transforms?: ReadonlyArray<unknown>
      _processFuncs?: ReadonlyArray<unknown>
    }
    if (internals._raw || (internals._transforms?.length ?? 0) > 0 || (internals._processFuncs?.length ?? 0) > 0) {
      return false
    }
    if (node.newline) return false
    // In the order `MimeNode.stream` takes: the encoding, the headers (which set the boundary), the content, the parts.
    const transferEncoding = node.getTransferEncoding()
    out.push(node.buildHeaders(), "\r\n\r\n")
    if (content !== undefined && content.length > 0) out.push(encodeContent(content, transferEncoding, encoders))
    if (node.multipart) {
      for (let i = 0; i < node.childNodes.length; i++) {
        out.push(`${i > 0 ? "\r\n" : ""}--${node.boundary}\r\n`)
        if (!write(node.childNodes[i]!)) return false
      }
      out.push(`\r\n--${node.boundary}--\r\n`)
    }
    return true
  }
  if (!write(root)) return undefined
  const message = out.join("")
  // As nodemailer's last stage: the message ends with a line break.
  return Buffer.from(message.endsWith("\n") ? message : message.endsWith("\r") ? `${message}\n` : `${message}\r\n`)
}
