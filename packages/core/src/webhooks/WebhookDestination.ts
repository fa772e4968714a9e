/**
 * Where a webhook may point (docs/DECISIONS.md §7), judged the same way at registration and again before every delivery:
 * the URL's shape (`UrlGuard.checkWebhookUrl`), then, unless private targets are allowed, every address the host
 * resolves to must be public. The delivery then connects to the address that was checked, never to a fresh DNS
 * answer, so a name that re-resolves to an internal address between check and connect (DNS rebinding) gets nowhere.
 *
 * DNS is I/O, so it is a service (`HostResolver`) that adapters implement; the server's settings come in as a
 * `Context.Reference` whose default is the safe one (https only, public addresses only, 10 s timeout).
 */
import { Context, Data, Effect, Result } from "effect"
import { type AddressClass, checkWebhookUrl, classifyAddress, hostAddress, hostIsLiteralForbidden } from "./UrlGuard.ts"

export interface WebhookSettings {
  /** Accept `http` URLs too (`WEBHOOK_ALLOW_INSECURE=true`). */
  readonly allowInsecure: boolean
  /** Accept hosts that resolve to loopback, private, link-local, metadata and other non-public addresses. */
  readonly allowPrivate: boolean
  /** How long a delivery may take, connect to response (`WEBHOOK_TIMEOUT_MS`). */
  readonly timeoutMs: number
}

export const defaultWebhookSettings: WebhookSettings = { allowInsecure: false, allowPrivate: false, timeoutMs: 10_000 }

export const CurrentWebhookSettings = Context.Reference<WebhookSettings>("feedback/WebhookSettings", {
  defaultValue: () => defaultWebhookSettings
})

export class HostNotResolved extends Data.TaggedError("HostNotResolved")<{ readonly hostname: string }> {}

/** Resolves a host name to every IPv4/IPv6 address it has (as `dns.lookup(name, {all: true})` does). */
export class HostResolver extends Context.Service<HostResolver, {
  readonly resolve: (hostname: string) => Effect.Effect<ReadonlyArray<string>, HostNotResolved>
}>()("feedback/HostResolver") {}

/** A destination that passed the checks. */
export interface Destination {
  readonly url: URL
  /**
   * The checked address to connect to, or undefined when private targets are allowed (then nothing needs pinning
   * and the transport resolves the name itself).
   */
  readonly address: string | undefined
}

/** Why a destination is refused: one sentence, safe to show to the API caller and to store in the delivery log. */
export class DestinationRefused extends Data.TaggedError("DestinationRefused")<{ readonly reason: string }> {}

const classWords: Readonly<Record<AddressClass, string>> = {
  public: "a public",
  loopback: "a loopback",
  private: "a private network",
  linkLocal: "a link-local",
  metadata: "a cloud metadata",
  cgnat: "a shared (carrier-grade NAT)",
  unspecified: "an unspecified",
  multicast: "a multicast",
  broadcast: "a broadcast",
  reserved: "a reserved",
  invalid: "an unusable"
}

const refusedAddress = (cls: AddressClass) =>
  new DestinationRefused({
    reason: `The webhook URL's host resolves to ${
      classWords[cls]
    } address, which webhooks may not reach; use a publicly reachable host.`
  })

/** The first non-public class among `addresses`, if any. */
const firstForbidden = (addresses: ReadonlyArray<string>): AddressClass | undefined => {
  for (const a of addresses) {
    const cls = classifyAddress(a)
    if (cls !== "public") return cls
  }
  return undefined
}

/**
 * The part of `checkDestination` that needs no DNS: the URL's shape and, for an address literal or when private
 * targets are allowed, the whole verdict. `undefined` when the host is a name to resolve. A pure function of the
 * URL and the settings, so a dispatcher may keep its answers (docs/DECISIONS.md §34).
 */
export const checkDestinationLocally = (
  rawUrl: string,
  settings: WebhookSettings
): Result.Result<Destination, DestinationRefused> | undefined => {
  const shape = checkWebhookUrl(rawUrl, { allowInsecure: settings.allowInsecure })
  if (Result.isFailure(shape)) return Result.fail(new DestinationRefused({ reason: shape.failure }))
  const url = shape.success
  if (settings.allowPrivate) return Result.succeed({ url, address: undefined })
  const literal = hostAddress(url)
  if (literal !== undefined) {
    const cls = classifyAddress(literal)
    return cls !== "public" ? Result.fail(refusedAddress(cls)) : Result.succeed({ url, address: literal })
  }
  if (hostIsLiteralForbidden(url)) return Result.fail(refusedAddress("loopback"))
  return undefined
}

/** Checks a webhook URL against the settings, resolving its host when the address guard is on. */
export const checkDestination = (
  rawUrl: string,
  settings: WebhookSettings
): Effect.Effect<Destination, DestinationRefused, HostResolver> =>
  Effect.gen(function*() {
    const local = checkDestinationLocally(rawUrl, settings)
    if (local !== undefined) return yield* Effect.fromResult(local)
    const url = new URL(rawUrl)
    const hostname = url.hostname.replace(/\.$/, "")
    const addresses = yield* HostResolver.use((r) => r.resolve(hostname)).pipe(
      Effect.mapError(() =>
        new DestinationRefused({
          reason: `The webhook URL's host ${hostname} could not be resolved; check the host name.`
        })
      )
    )
    if (addresses.length === 0) {
      return yield* new DestinationRefused({
        reason: `The webhook URL's host ${hostname} could not be resolved; check the host name.`
      })
    }
    // Every address must be public: a client may connect to any of them.
    const forbidden = firstForbidden(addresses)
    if (forbidden !== undefined) return yield* refusedAddress(forbidden)
    return { url, address: addresses[0] }
  })
