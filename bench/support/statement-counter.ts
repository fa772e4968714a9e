/**
 * A TCP proxy between a server process and its PostgreSQL that counts the statements the process sends, and only
 * those: every simple `Query` message and every `Execute` of the extended protocol, on every connection the process
 * opens through it (its pool and its listening connection). The database's own counters (`pg_stat_database.
 * xact_commit`) also count autovacuum's and autoanalyze's transactions and whatever else runs on the database; this
 * needs no server setting (`pg_stat_statements`, `log_statement`) and no change to the server. The bytes are
 * forwarded as they arrive; only a copy of the messages' heads is read (the proxy speaks no TLS: the bench server has
 * none).
 */
import * as Net from "node:net"

export interface StatementCounter {
  /** The database URL with its host and port replaced by the proxy's. */
  readonly url: string
  /** Statements sent so far. */
  readonly count: () => number
  /** Statements sent so far by their text (whitespace collapsed, the first 100 characters). */
  readonly texts: () => ReadonlyMap<string, number>
  readonly close: () => Promise<void>
}

/** Message types of the frontend protocol read here. */
const QUERY = 0x51 // 'Q'
const PARSE = 0x50 // 'P'
const BIND = 0x42 // 'B'
const EXECUTE = 0x45 // 'E'
/** Parse, Bind and Execute carry their names (and Parse its text) first; the rest of a large Bind is skipped. */
const HEAD_BYTES = 8_192

const cString = (buffer: Buffer, from: number): [string, number] => {
  const end = buffer.indexOf(0, from)
  return end < 0 ? [buffer.toString("utf8", from), buffer.length] : [buffer.toString("utf8", from, end), end + 1]
}

const shortText = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, 100)

/** A Bind's parameters, when given in text (a binary one is shown as null too). */
const bindParameters = (body: Buffer, from: number): ReadonlyArray<string | null> => {
  let at = from
  const formats = body.readInt16BE(at)
  at += 2 + 2 * formats
  const binary = (i: number) =>
    formats === 1 ? body.readInt16BE(from + 2) === 1 : formats > 1 && body.readInt16BE(from + 2 + 2 * i) === 1
  const count = body.readInt16BE(at)
  at += 2
  const values: Array<string | null> = []
  for (let i = 0; i < count; i++) {
    const length = body.readInt32BE(at)
    at += 4
    values.push(length < 0 || binary(i) ? null : body.toString("utf8", at, at + length))
    at += Math.max(0, length)
  }
  return values
}

/**
 * Starts the proxy; `close` stops it and its connections. With `capture`, each statement's whole text and parameters
 * are handed to it as it is executed (for reading a plan: `EXPLAIN` of the same statement by hand).
 */
export const statementCounter = (
  databaseUrl: string,
  capture?: (text: string, parameters: ReadonlyArray<string | null>) => void
): Promise<StatementCounter> => {
  const target = new URL(databaseUrl)
  const sockets = new Set<Net.Socket>()
  const byText = new Map<string, number>()
  let total = 0
  const counted = (text: string) => {
    total++
    const key = shortText(text)
    byText.set(key, (byText.get(key) ?? 0) + 1)
  }

  const proxy = Net.createServer((client) => {
    const server = Net.connect(Number(target.port || 5432), target.hostname)
    sockets.add(client).add(server)
    // Per connection: named statements and portals, and where the reader is in the message stream.
    const statements = new Map<string, string>()
    const portals = new Map<string, string>()
    const bound = new Map<string, ReadonlyArray<string | null>>()
    let started = false
    let pending = Buffer.alloc(0)
    let skip = 0
    const message = (type: number, body: Buffer) => {
      if (type === QUERY) counted(cString(body, 0)[0])
      else if (type === PARSE) {
        const [name, next] = cString(body, 0)
        statements.set(name, cString(body, next)[0])
      } else if (type === BIND) {
        const [portal, next] = cString(body, 0)
        const [statement, after] = cString(body, next)
        portals.set(portal, statement)
        if (capture !== undefined) bound.set(portal, bindParameters(body, after))
      } else if (type === EXECUTE) {
        const portal = cString(body, 0)[0]
        const text = statements.get(portals.get(portal) ?? "") ?? "(unknown)"
        counted(text)
        capture?.(text, bound.get(portal) ?? [])
      }
    }
    const read = (chunk: Buffer) => {
      let buffer = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      let at = 0
      for (;;) {
        if (skip > 0) {
          const skipped = Math.min(skip, buffer.length - at)
          skip -= skipped
          at += skipped
          if (skip > 0) break
        }
        if (!started) {
          // The startup packet, an SSL or cancel request: a length and a code, no type byte.
          if (buffer.length - at < 8) break
          const length = buffer.readInt32BE(at)
          const code = buffer.readInt32BE(at + 4)
          if (buffer.length - at < length) break
          at += length
          if (code !== 80877103 && code !== 80877104 && code !== 80877102) started = true
          continue
        }
        if (buffer.length - at < 5) break
        const type = buffer[at]!
        const length = buffer.readInt32BE(at + 1) - 4
        const wanted = type === BIND ?
          (capture === undefined ? Math.min(length, HEAD_BYTES) : length) :
          type === QUERY || type === PARSE ||
            type === EXECUTE
          ? length
          : 0
        if (buffer.length - at - 5 < wanted) break
        message(type, buffer.subarray(at + 5, at + 5 + wanted))
        at += 5 + wanted
        skip = length - wanted
      }
      pending = Buffer.from(buffer.subarray(at))
    }
    client.on("data", (chunk: Buffer) => {
      read(chunk)
      server.write(chunk)
    })
    server.pipe(client)
    const drop = () => {
      sockets.delete(client)
      sockets.delete(server)
      client.destroy()
      server.destroy()
    }
    client.on("error", drop).on("close", drop)
    server.on("error", drop).on("close", drop)
  })

  return new Promise((resolve) =>
    proxy.listen(0, "127.0.0.1", () => {
      const url = new URL(databaseUrl)
      url.hostname = "127.0.0.1"
      url.port = String((proxy.address() as Net.AddressInfo).port)
      resolve({
        url: url.toString(),
        count: () => total,
        texts: () => new Map(byText),
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            proxy.close(() => done())
          })
      })
    })
  )
}
