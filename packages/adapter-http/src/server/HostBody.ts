/**
 * A request whose body a host's own parser already read (an app-wide `express.json()` before the mount, a Fastify
 * content-type parser): the stream is spent, and reading it again would give an empty body, a misleading 400. The
 * parsed body is used instead when it can be turned back into the bytes that were sent (JSON, text or raw bytes);
 * otherwise the answer is a 500 in the error envelope naming the fix (docs/EMBEDDING.md).
 */
import { IncomingMessage, type ServerResponse } from "node:http"
import { attachOriginal, originalOf } from "./HostAuthentication.ts"

/** The message of the 500 a spent body gets: what the host must change. */
export const SPENT_BODY_MESSAGE = "The host read this request's body before the Admin API (a body parser such as " +
  "express.json() ahead of its mount) into a form the API cannot use. Mount the API before the host's body parsers, " +
  "or leave the API's path out of them."

const isJsonType = (contentType: string | undefined) =>
  contentType !== undefined && /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i.test(contentType)

/**
 * The bytes a host parser's result stands for: a Buffer or text as it is, a JSON value written back as JSON when the
 * request said it was JSON; `undefined` when nothing usable is left (a form parsed into an object, nothing kept).
 */
export const bodyBytesOf = (parsed: unknown, contentType: string | undefined): Uint8Array | undefined => {
  if (parsed instanceof Uint8Array) return parsed
  if (typeof parsed === "string") return Buffer.from(parsed, "utf8")
  if (parsed !== undefined && isJsonType(contentType)) return Buffer.from(JSON.stringify(parsed), "utf8")
  return undefined
}

/** Whether something already read from the request's body stream. */
export const isBodySpent = (req: IncomingMessage): boolean =>
  req.readableDidRead || req.readableEnded || (req as { _body?: unknown })._body === true

/**
 * A request the API can read: `req` itself while its body is unread; a copy carrying the parsed body's bytes when a
 * host parser read it; `undefined` (after answering the 500) when neither works.
 */
export const readableRequest = (
  req: IncomingMessage,
  res: ServerResponse,
  // What the host's parser left: on Express's request itself, on Fastify's request for a Fastify mount.
  parsed: unknown = (originalOf(req) as { body?: unknown }).body
): IncomingMessage | undefined => {
  if (!isBodySpent(req)) return req
  const bytes = bodyBytesOf(parsed, req.headers["content-type"])
  if (bytes === undefined) {
    res.writeHead(500, { "content-type": "application/json" }).end(
      JSON.stringify({ error: { code: "INTERNAL", message: SPENT_BODY_MESSAGE } })
    )
    return undefined
  }
  const copy = new IncomingMessage(req.socket)
  copy.method = req.method!
  copy.url = req.url!
  copy.httpVersionMajor = req.httpVersionMajor
  copy.httpVersionMinor = req.httpVersionMinor
  copy.httpVersion = req.httpVersion
  const headers = { ...req.headers, "content-length": String(bytes.length) }
  delete headers["transfer-encoding"]
  copy.headers = headers
  copy.rawHeaders = Object.entries(headers).flatMap(([name, value]) =>
    Array.isArray(value) ? value.flatMap((v) => [name, v]) : value === undefined ? [] : [name, value]
  )
  // Complete: nothing is left on the socket for it, and the server's teardown must not drain or close it.
  copy.complete = true
  copy.push(bytes)
  copy.push(null)
  return attachOriginal(copy, originalOf(req))
}
