/**
 * A TCP proxy in front of the test PostgreSQL server that can stall connections: stop forwarding in both directions
 * without closing anything, as a dead peer or a half-open network path does. A connection is picked by what its
 * client sent first (the startup packet carries `application_name` in the clear, the test server having no TLS);
 * connections opened after a stall are forwarded as usual, as a replacement would be.
 */
import { Effect } from "effect"
import * as Net from "node:net"

export interface StallingProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  readonly url: string
  /** Stalls every open connection whose first bytes contain (or match) `marker`; answers how many. */
  readonly stall: (marker: string | RegExp) => number
}

interface Link {
  readonly client: Net.Socket
  readonly server: Net.Socket
  hello: string
}

/** Starts a proxy to `databaseUrl`'s server for the scope. */
export const stallingProxy = (databaseUrl: string) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      const target = new URL(databaseUrl)
      const links = new Set<Link>()
      const proxy = Net.createServer((client) => {
        const server = Net.connect(Number(target.port || 5432), target.hostname)
        const link: Link = { client, server, hello: "" }
        links.add(link)
        client.on("data", (chunk: Buffer) => {
          if (link.hello.length < 4096) link.hello += chunk.toString("latin1")
        })
        client.pipe(server)
        server.pipe(client)
        const drop = () => {
          links.delete(link)
          client.destroy()
          server.destroy()
        }
        client.on("error", drop).on("close", drop)
        server.on("error", drop).on("close", drop)
      })
      return new Promise<{ proxy: Net.Server; links: Set<Link>; url: string }>((resolve) =>
        proxy.listen(0, "127.0.0.1", () => {
          const url = new URL(databaseUrl)
          url.hostname = "127.0.0.1"
          url.port = String((proxy.address() as Net.AddressInfo).port)
          resolve({ proxy, links, url: url.toString() })
        })
      )
    }),
    ({ links, proxy }) =>
      Effect.promise(() => {
        for (const { client, server } of links) {
          client.destroy()
          server.destroy()
        }
        return new Promise<void>((resolve) => proxy.close(() => resolve()))
      })
  ).pipe(Effect.map(({ links, url }): StallingProxy => ({
    url,
    stall: (marker) => {
      let stalled = 0
      for (const link of links) {
        if (typeof marker === "string" ? !link.hello.includes(marker) : !marker.test(link.hello)) continue
        link.client.unpipe(link.server)
        link.server.unpipe(link.client)
        link.client.pause()
        link.server.pause()
        stalled++
      }
      return stalled
    }
  })))
