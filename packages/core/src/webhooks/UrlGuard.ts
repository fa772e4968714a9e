/**
 * Pure parts of the webhook SSRF guard (docs/DECISIONS.md §7). A webhook URL must be an absolute `https` URL (`http` too
 * when the server runs with `WEBHOOK_ALLOW_INSECURE=true`) with a host and no credentials; and, unless the server
 * runs with `WEBHOOK_ALLOW_PRIVATE=true`, it must not reach loopback, private, link-local, metadata or other
 * non-public addresses. The adapter that resolves host names calls `classifyAddress` / `isForbiddenAddress` on
 * every address a name resolves to, at registration and again at delivery (DNS can change in between), and
 * connects only to an address it has checked.
 *
 * Host forms: WHATWG `new URL()` already turns every numeric IPv4 spelling into dotted decimal
 * (`http://2130706433/`, `http://0x7f.1/`, `http://0177.0.0.1/`, `http://127.1/`, `http://127.0.0.1./` all give
 * hostname `127.0.0.1`) and writes IPv6 in brackets in compressed hex (`[::ffff:127.0.0.1]` gives
 * `[::ffff:7f00:1]`). So the checks here read `url.hostname` and only need strict dotted-decimal IPv4 and IPv6
 * parsing. A string that is not an address in those forms classifies as `invalid`, which is forbidden: anything
 * ambiguous (such as `010.0.0.1`, which some resolvers read as octal) fails closed.
 */
import { Result } from "effect"

export type AddressClass =
  | "public"
  | "loopback" // 127.0.0.0/8, ::1
  | "private" // 10/8, 172.16/12, 192.168/16, fc00::/7 (unique local), fec0::/10 (old site-local)
  | "linkLocal" // 169.254/16, fe80::/10
  | "metadata" // cloud instance metadata endpoints, e.g. 169.254.169.254
  | "cgnat" // 100.64.0.0/10, shared address space (RFC 6598)
  | "unspecified" // 0.0.0.0/8 ("this network"; 0.0.0.0 reaches the local host on Linux), ::
  | "multicast" // 224.0.0.0/4, ff00::/8
  | "broadcast" // 255.255.255.255
  | "reserved" // documentation, benchmarking, IETF, future use; IPv6 outside 2000::/3
  | "invalid" // not an IP address literal

export interface WebhookUrlOptions {
  /** `http` URLs are accepted too (`WEBHOOK_ALLOW_INSECURE=true`). */
  readonly allowInsecure: boolean
}

export const MAX_WEBHOOK_URL_LENGTH = 2048

// ---------------------------------------------------------------------------------------------------------------
// Parsing
// ---------------------------------------------------------------------------------------------------------------

const decimalOctet = /^(?:0|[1-9][0-9]{0,2})$/

/** Strict dotted decimal (`a.b.c.d`, no leading zeros) as an unsigned 32-bit number. */
const parseIPv4 = (s: string): number | undefined => {
  const parts = s.split(".")
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (!decimalOctet.test(part)) return undefined
    const n = Number(part)
    if (n > 255) return undefined
    value = value * 256 + n
  }
  return value
}

const hexGroup = /^[0-9a-fA-F]{1,4}$/

/** RFC 4291 text form (with `::`, an optional dotted IPv4 tail and an optional `%zone`) as a 128-bit number. */
const parseIPv6 = (input: string): bigint | undefined => {
  const zone = input.indexOf("%")
  const s = zone >= 0 ? input.slice(0, zone) : input
  if (zone >= 0 && zone === input.length - 1) return undefined
  const halves = s.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const out: Array<number> = []
    const items = part.split(":")
    for (let i = 0; i < items.length; i++) {
      const item = items[i]!
      if (i === items.length - 1 && item.includes(".")) {
        const tail = parseIPv4(item)
        if (tail === undefined) return undefined
        out.push(Math.floor(tail / 0x10000), tail % 0x10000)
      } else if (hexGroup.test(item)) {
        out.push(parseInt(item, 16))
      } else {
        return undefined
      }
    }
    return out
  }
  const head = groupsOf(halves[0]!)
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (head === undefined || tail === undefined) return undefined
  // A dotted tail is only allowed at the very end.
  if (halves.length === 2 && halves[0]!.includes(".")) return undefined
  const missing = 8 - head.length - tail.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail]
  let value = 0n
  for (const g of groups) value = (value << 16n) | BigInt(g)
  return value
}

// ---------------------------------------------------------------------------------------------------------------
// Webhook URL shape
// ---------------------------------------------------------------------------------------------------------------

/** Parses and checks the shape of a webhook URL; the failure is a one-sentence reason for a 400. */
export const checkWebhookUrl = (url: string, options: WebhookUrlOptions): Result.Result<URL, string> => {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) {
    return Result.fail(`The webhook URL must be at most ${MAX_WEBHOOK_URL_LENGTH} characters long.`)
  }
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return Result.fail("The webhook URL is not a valid absolute URL such as https://example.com/webhooks.")
  }
  const schemeOk = parsed.protocol === "https:" || (options.allowInsecure && parsed.protocol === "http:")
  if (!schemeOk) {
    return Result.fail(
      options.allowInsecure
        ? "The webhook URL must use https or http."
        : "The webhook URL must use https."
    )
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return Result.fail("The webhook URL must not contain a user name or password; use an HMAC secret instead.")
  }
  if (parsed.hostname === "") return Result.fail("The webhook URL must name a host.")
  return Result.succeed(parsed)
}

/**
 * The IP address a URL's host spells literally (IPv4 dotted decimal, or IPv6 without brackets), or undefined
 * when the host is a name that needs DNS.
 */
export const hostAddress = (url: URL): string | undefined => {
  const host = url.hostname
  if (host.startsWith("[") && host.endsWith("]")) return host.slice(1, -1)
  return parseIPv4(host) === undefined ? undefined : host
}

/** `localhost` and `*.localhost` are loopback by definition (RFC 6761), whatever DNS says. */
const isLocalhostName = (host: string): boolean => {
  const h = host.toLowerCase().replace(/\.$/, "")
  return h === "localhost" || h.endsWith(".localhost")
}

/**
 * Whether the host alone, with no DNS, is known to be forbidden: a literal non-public address, or a localhost
 * name. False for other names; those are judged by classifying what they resolve to.
 */
export const hostIsLiteralForbidden = (url: URL): boolean => {
  const address = hostAddress(url)
  if (address !== undefined) return isForbiddenAddress(address)
  return isLocalhostName(url.hostname)
}

// ---------------------------------------------------------------------------------------------------------------
// Address classification
// ---------------------------------------------------------------------------------------------------------------

/** Everything except `public` is refused unless the server allows private targets. */
export const isForbiddenAddress = (ip: string): boolean => classifyAddress(ip) !== "public"

/**
 * Classifies an IPv4 (dotted decimal) or IPv6 address literal, as `dns.lookup` returns them or as they appear in
 * a URL. IPv6 may be in brackets and may carry a zone (`fe80::1%eth0`). Addresses that embed an IPv4 address and
 * reach it (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`) take the class of that address.
 */
export const classifyAddress = (ip: string): AddressClass => {
  const v4 = parseIPv4(ip)
  if (v4 !== undefined) return classifyIPv4(v4)
  const v6 = parseIPv6(ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip)
  return v6 === undefined ? "invalid" : classifyIPv6(v6)
}

/** A CIDR block and its class; the first matching row wins, so specific rows come before broader ones. */
type Row<A> = readonly [prefix: A, length: number, cls: AddressClass]

const v4 = (dotted: string, length: number, cls: AddressClass): Row<number> => [parseIPv4(dotted)!, length, cls]

const IPV4_TABLE: ReadonlyArray<Row<number>> = [
  v4("169.254.169.254", 32, "metadata"), // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle...
  v4("100.100.100.200", 32, "metadata"), // Alibaba Cloud
  v4("255.255.255.255", 32, "broadcast"),
  v4("0.0.0.0", 8, "unspecified"),
  v4("10.0.0.0", 8, "private"),
  v4("100.64.0.0", 10, "cgnat"),
  v4("127.0.0.0", 8, "loopback"),
  v4("169.254.0.0", 16, "linkLocal"),
  v4("172.16.0.0", 12, "private"),
  v4("192.0.0.0", 24, "reserved"), // IETF protocol assignments
  v4("192.0.2.0", 24, "reserved"), // TEST-NET-1
  v4("192.88.99.0", 24, "reserved"), // deprecated 6to4 relay anycast
  v4("192.168.0.0", 16, "private"),
  v4("198.18.0.0", 15, "reserved"), // benchmarking
  v4("198.51.100.0", 24, "reserved"), // TEST-NET-2
  v4("203.0.113.0", 24, "reserved"), // TEST-NET-3
  v4("224.0.0.0", 4, "multicast"),
  v4("240.0.0.0", 4, "reserved") // future use
]

const inBlock4 = (address: number, prefix: number, length: number): boolean =>
  length === 0 || (address >>> (32 - length)) === (prefix >>> (32 - length))

const classifyIPv4 = (address: number): AddressClass => {
  for (const [prefix, length, cls] of IPV4_TABLE) if (inBlock4(address, prefix, length)) return cls
  return "public"
}

/** IPv6 blocks whose low bits carry an IPv4 address that the block reaches; `shift` is where those bits start. */
const IPV6_EMBEDDING: ReadonlyArray<readonly [prefix: bigint, length: number, shift: bigint]> = [
  [parseIPv6("::ffff:0:0")!, 96, 0n], // IPv4-mapped
  [parseIPv6("64:ff9b::")!, 96, 0n], // NAT64 well-known prefix
  [parseIPv6("2002::")!, 16, 80n] // 6to4: 2002:AABB:CCDD::/48
]

const v6 = (text: string, length: number, cls: AddressClass): Row<bigint> => [parseIPv6(text)!, length, cls]

const IPV6_TABLE: ReadonlyArray<Row<bigint>> = [
  v6("::", 128, "unspecified"),
  v6("::1", 128, "loopback"),
  v6("::", 96, "reserved"), // IPv4-compatible (deprecated)
  v6("64:ff9b:1::", 48, "reserved"), // local-use NAT64
  v6("100::", 64, "reserved"), // discard-only
  v6("2001::", 23, "reserved"), // IETF protocol assignments, incl. Teredo 2001::/32
  v6("2001:db8::", 32, "reserved"), // documentation
  v6("3fff::", 20, "reserved"), // documentation (RFC 9637)
  v6("fd00:ec2::254", 128, "metadata"), // AWS instance metadata over IPv6
  v6("fc00::", 7, "private"), // unique local
  v6("fe80::", 10, "linkLocal"),
  v6("fec0::", 10, "private"), // deprecated site-local
  v6("ff00::", 8, "multicast"),
  v6("2000::", 3, "public") // global unicast; anything not matched by now is reserved
]

const inBlock6 = (address: bigint, prefix: bigint, length: number): boolean => {
  const shift = BigInt(128 - length)
  return (address >> shift) === (prefix >> shift)
}

const classifyIPv6 = (address: bigint): AddressClass => {
  for (const [prefix, length, shift] of IPV6_EMBEDDING) {
    if (inBlock6(address, prefix, length)) return classifyIPv4(Number((address >> shift) & 0xffffffffn))
  }
  for (const [prefix, length, cls] of IPV6_TABLE) if (inBlock6(address, prefix, length)) return cls
  return "reserved"
}
