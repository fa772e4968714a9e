/**
 * The client address a storefront request is counted for (docs/DECISIONS.md §55): the peer's address, unless the peer
 * is a proxy the operator trusts (`TRUST_PROXY`: comma-separated addresses and CIDRs, default none); then the
 * right-most `X-Forwarded-For` hop that is not itself trusted, since every hop left of it was written by a party
 * nobody vouches for. Without a trusted peer `X-Forwarded-For` is never read, so a client cannot choose its bucket.
 */
import { BlockList, isIP } from "node:net"

export interface TrustedProxies {
  readonly contains: (address: string) => boolean
  readonly empty: boolean
}

/** An IPv4 address written as IPv6 (`::ffff:203.0.113.7`, what a dual-stack socket reports) in its IPv4 form. */
export const normalizeAddress = (address: string): string => {
  const trimmed = address.trim()
  const lower = trimmed.toLowerCase()
  return lower.startsWith("::ffff:") && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower
}

/** Parses `TRUST_PROXY`; a malformed entry is an error naming it (the server refuses to start). */
export const parseTrustProxy = (spec: string): TrustedProxies => {
  const list = new BlockList()
  let entries = 0
  for (const raw of spec.split(",")) {
    const entry = raw.trim()
    if (entry === "") continue
    const slash = entry.indexOf("/")
    const address = normalizeAddress(slash === -1 ? entry : entry.slice(0, slash))
    const family = isIP(address)
    if (family === 0) throw new Error(`TRUST_PROXY: ${JSON.stringify(entry)} is not an IP address or CIDR`)
    const type = family === 4 ? "ipv4" : "ipv6"
    if (slash === -1) list.addAddress(address, type)
    else {
      const prefix = entry.slice(slash + 1)
      const bits = /^\d{1,3}$/.test(prefix) ? Number(prefix) : Number.NaN
      if (!(bits >= 0 && bits <= (family === 4 ? 32 : 128))) {
        throw new Error(`TRUST_PROXY: ${JSON.stringify(entry)} has no valid prefix length`)
      }
      list.addSubnet(address, bits, type)
    }
    entries++
  }
  return {
    empty: entries === 0,
    contains: (address) => {
      const normalized = normalizeAddress(address)
      const family = isIP(normalized)
      return family !== 0 && list.check(normalized, family === 4 ? "ipv4" : "ipv6")
    }
  }
}

/** What a peer without an address (an in-process web handler) counts as: one shared client. */
export const UNKNOWN_ADDRESS = "unknown"

/**
 * The client address: `peer` unless it is trusted; then the right-most hop of `forwardedFor` (every header value,
 * in order) that is not trusted, or the left-most hop when all are. A hop that is not an IP address ends the walk
 * at the hop before it (nothing left of a garbled hop is believed).
 */
export const clientAddressOf = (
  peer: string | undefined,
  forwardedFor: string | undefined,
  trusted: TrustedProxies
): string => {
  if (peer === undefined || peer === "") return UNKNOWN_ADDRESS
  const address = normalizeAddress(peer)
  if (trusted.empty || forwardedFor === undefined || !trusted.contains(address)) return address
  const hops = forwardedFor.split(",").map(normalizeAddress)
  let client = address
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!
    if (isIP(hop) === 0) return client
    client = hop
    if (!trusted.contains(hop)) return hop
  }
  return client
}
