/**
 * The DNS of the conformance suites: a fixed table, so webhook destinations are judged the same on every machine
 * and no test ever resolves a real name. `CoreLayer` needs a `HostResolver`; `runStoreConformance` provides this one.
 */
import { Effect, Layer } from "effect"
import { Webhooks } from "@feedback/core"

const dns: Record<string, ReadonlyArray<string>> = {
  "hooks.example.com": ["93.184.216.34"],
  "other.example.com": ["2606:2800:220:1:248:1893:25c8:1946"],
  "internal.example.com": ["10.0.0.5"],
  "mixed.example.com": ["93.184.216.34", "127.0.0.1"]
}

/** A resolver answering from `table` alone: a name not in it does not resolve, and nothing reaches the network. */
export const fixedDns = (table: Readonly<Record<string, ReadonlyArray<string>>>) =>
  Layer.succeed(
    Webhooks.HostResolver,
    Webhooks.HostResolver.of({
      resolve: (hostname) =>
        Object.hasOwn(table, hostname)
          ? Effect.succeed(table[hostname]!)
          : Effect.fail(new Webhooks.HostNotResolved({ hostname }))
    })
  )

export const ConformanceDns = fixedDns(dns)
