import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type AddressClass,
  checkWebhookUrl,
  classifyAddress,
  hostAddress,
  hostIsLiteralForbidden,
  isForbiddenAddress,
  MAX_WEBHOOK_URL_LENGTH
} from "../src/webhooks/UrlGuard.ts"

describe("checkWebhookUrl", () => {
  const secure = { allowInsecure: false }
  const insecure = { allowInsecure: true }

  it.each(
    [
      ["https://example.com/webhooks", secure, "https://example.com/webhooks"],
      ["https://example.com:8443/a?b=c", secure, "https://example.com:8443/a?b=c"],
      ["HTTPS://Example.COM/x", secure, "https://example.com/x"],
      ["https://ßtraße.de/", secure, "https://xn--trae-unad.de/"],
      ["https://127.0.0.1/", secure, "https://127.0.0.1/"], // shape only; the address is judged separately
      ["http://example.com/hook", insecure, "http://example.com/hook"],
      ["https://example.com/hook", insecure, "https://example.com/hook"],
      ["https://@example.com/", secure, "https://example.com/"] // empty credentials are no credentials
    ] as const
  )("accepts %s", (url, options, href) => {
    const r = checkWebhookUrl(url, options)
    expect(Result.isSuccess(r) && r.success.href).toBe(href)
  })

  it.each(
    [
      ["", secure, /valid absolute URL/],
      ["example.com/hook", secure, /valid absolute URL/],
      ["/webhooks", secure, /valid absolute URL/],
      ["https://exa mple.com/", secure, /valid absolute URL/],
      ["http://1.2.3.4.5/", insecure, /valid absolute URL/],
      ["http://example.com/hook", secure, /^The webhook URL must use https\.$/],
      ["ftp://example.com/", secure, /must use https/],
      ["ftp://example.com/", insecure, /must use https or http/],
      ["file:///etc/passwd", insecure, /must use https or http/],
      ["javascript:alert(1)", insecure, /must use https or http/],
      ["data:text/plain,hi", secure, /must use https/],
      ["https://user:pass@example.com/", secure, /user name or password/],
      ["https://user@example.com/", secure, /user name or password/],
      ["https://:pass@example.com/", secure, /user name or password/],
      ["https://example.com/" + "a".repeat(MAX_WEBHOOK_URL_LENGTH), secure, /at most 2048 characters/]
    ] as const
  )("rejects %j", (url, options, reason) => {
    const r = checkWebhookUrl(url, options)
    expect(Result.isFailure(r)).toBe(true)
    if (Result.isFailure(r)) {
      expect(r.failure).toMatch(reason)
      expect(r.failure).toMatch(/^The webhook URL .*\.$/)
    }
  })
})

describe("classifyAddress", () => {
  const table: ReadonlyArray<readonly [string, AddressClass]> = [
    // IPv4
    ["8.8.8.8", "public"],
    ["1.1.1.1", "public"],
    ["93.184.216.34", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["172.15.255.255", "public"],
    ["172.32.0.0", "public"],
    ["192.168.1.1", "private"],
    ["192.169.0.1", "public"],
    ["169.254.0.1", "linkLocal"],
    ["169.254.169.254", "metadata"],
    ["169.254.169.253", "linkLocal"],
    ["100.100.100.200", "metadata"],
    ["100.64.0.1", "cgnat"],
    ["100.127.255.255", "cgnat"],
    ["100.63.255.255", "public"],
    ["100.128.0.0", "public"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.254", "reserved"],
    ["192.0.2.1", "reserved"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"],
    ["198.18.0.1", "reserved"],
    ["198.19.255.255", "reserved"],
    ["192.0.0.8", "reserved"],
    ["223.255.255.255", "public"],
    // IPv6
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["[::1]", "loopback"],
    ["2606:4700:4700::1111", "public"],
    ["2001:4860:4860::8888", "public"],
    ["2a00:1450:4001:82a::200e", "public"],
    ["fc00::1", "private"],
    ["fd12:3456:789a::1", "private"],
    ["fe80::1", "linkLocal"],
    ["fe80::1%eth0", "linkLocal"],
    ["FE80::ABCD", "linkLocal"],
    ["febf:ffff::1", "linkLocal"],
    ["fec0::1", "private"],
    ["ff02::1", "multicast"],
    ["fd00:ec2::254", "metadata"],
    ["2001:db8::1", "reserved"],
    ["2001::1", "reserved"], // Teredo
    ["100::1", "reserved"],
    ["3fff::1", "reserved"],
    ["1::", "reserved"], // outside 2000::/3
    ["::127.0.0.1", "reserved"], // IPv4-compatible, deprecated
    ["::ffff:0:127.0.0.1", "reserved"], // IPv4-translated
    // IPv6 embedding IPv4
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::FFFF:7F00:0001", "loopback"],
    ["0:0:0:0:0:ffff:7f00:1", "loopback"],
    ["::ffff:169.254.169.254", "metadata"],
    ["::ffff:a9fe:a9fe", "metadata"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:8.8.8.8", "public"],
    ["::ffff:0.0.0.0", "unspecified"],
    ["64:ff9b::127.0.0.1", "loopback"],
    ["64:ff9b::808:808", "public"],
    ["64:ff9b:1::1", "reserved"],
    ["2002:7f00:1::", "loopback"],
    ["2002:a9fe:a9fe::1", "metadata"],
    ["2002:808:808::1", "public"],
    // not addresses
    ["", "invalid"],
    ["localhost", "invalid"],
    ["example.com", "invalid"],
    ["127.1", "invalid"],
    ["2130706433", "invalid"],
    ["0x7f.0.0.1", "invalid"],
    ["010.0.0.1", "invalid"],
    ["127.0.0.01", "invalid"],
    ["256.0.0.1", "invalid"],
    ["1.2.3.4.5", "invalid"],
    ["1.2.3.", "invalid"],
    [" 8.8.8.8", "invalid"],
    [":::", "invalid"],
    ["1::2::3", "invalid"],
    ["1:2:3:4:5:6:7:8:9", "invalid"],
    ["1:2:3:4:5:6:7", "invalid"],
    ["1:2:3:4:5:6:7:8::", "invalid"],
    ["::12345", "invalid"],
    ["::g", "invalid"],
    ["1.2.3.4::", "invalid"],
    ["::1.2.3.4:5", "invalid"],
    ["::ffff:256.0.0.1", "invalid"],
    ["fe80::1%", "invalid"],
    [":1::", "invalid"],
    ["1::2:", "invalid"]
  ]
  it.each(table)("%j is %s", (ip, cls) => {
    expect(classifyAddress(ip)).toBe(cls)
    expect(isForbiddenAddress(ip)).toBe(cls !== "public")
  })

  const octet = fc.integer({ min: 0, max: 255 })
  const ipv4 = fc.tuple(octet, octet, octet, octet).map((o) => o.join("."))

  it("classifies an IPv4 address the same when it is IPv4-mapped, in dotted or hex form", () => {
    fc.assert(
      fc.property(ipv4, (ip) => {
        const [a, b, c, d] = ip.split(".").map(Number) as [number, number, number, number]
        const hex = `::ffff:${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
        expect(classifyAddress(`::ffff:${ip}`)).toBe(classifyAddress(ip))
        expect(classifyAddress(hex)).toBe(classifyAddress(ip))
      })
    )
  })

  it("agrees with a straightforward reading of the IPv4 blocks", () => {
    const reference = ([a, b, c, d]: ReadonlyArray<number>): AddressClass => {
      if (a === 169 && b === 254 && c === 169 && d === 254) return "metadata"
      if (a === 100 && b === 100 && c === 100 && d === 200) return "metadata"
      if (a === 255 && b === 255 && c === 255 && d === 255) return "broadcast"
      if (a === 0) return "unspecified"
      if (a === 127) return "loopback"
      if (a === 10 || (a === 172 && b! >= 16 && b! <= 31) || (a === 192 && b === 168)) return "private"
      if (a === 169 && b === 254) return "linkLocal"
      if (a === 100 && b! >= 64 && b! <= 127) return "cgnat"
      if (a! >= 224 && a! <= 239) return "multicast"
      if (a! >= 240) return "reserved"
      if (a === 192 && b === 0 && (c === 0 || c === 2)) return "reserved"
      if (a === 192 && b === 88 && c === 99) return "reserved"
      if (a === 198 && (b === 18 || b === 19)) return "reserved"
      if ((a === 198 && b === 51 && c === 100) || (a === 203 && b === 0 && c === 113)) return "reserved"
      return "public"
    }
    // Bias towards the interesting first octets so every block is hit.
    const first = fc.oneof(fc.constantFrom(0, 10, 100, 127, 169, 172, 192, 198, 203, 224, 239, 240, 255), octet)
    const second = fc.oneof(fc.constantFrom(0, 15, 16, 31, 32, 51, 63, 64, 88, 100, 127, 128, 168, 254, 255), octet)
    const third = fc.oneof(fc.constantFrom(0, 2, 99, 100, 113, 169, 255), octet)
    const fourth = fc.oneof(fc.constantFrom(0, 200, 254, 255), octet)
    fc.assert(
      fc.property(fc.tuple(first, second, third, fourth), (o) => {
        expect(classifyAddress(o.join("."))).toBe(reference(o))
      }),
      { numRuns: 5000 }
    )
  })

  it("reads any IPv6 text form the URL parser accepts as the same address", () => {
    const group = fc.oneof(
      fc.constantFrom(0, 1, 0xffff, 0xfe80, 0xfc00, 0x2001, 0x64, 0xff9b),
      fc.integer({ min: 0, max: 0xffff })
    )
    fc.assert(
      fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (groups) => {
        const full = groups.map((g) => g.toString(16).padStart(4, "0")).join(":")
        const compressed = new URL(`http://[${full}]/`).hostname // WHATWG's canonical compressed form
        expect(classifyAddress(compressed)).toBe(classifyAddress(full))
        expect(classifyAddress(full)).not.toBe("invalid")
      }),
      { numRuns: 2000 }
    )
  })
})

describe("hostIsLiteralForbidden", () => {
  const url = (s: string) => new URL(s)
  it.each(
    [
      // every numeric spelling of 127.0.0.1 that WHATWG normalises
      ["http://127.0.0.1/", true],
      ["http://2130706433/", true],
      ["http://0x7f.1/", true],
      ["http://0x7f000001/", true],
      ["http://0177.0.0.1/", true],
      ["http://127.1/", true],
      ["http://127.0.0.1./", true],
      ["https://%31%32%37.0.0.1/", true],
      ["http://0/", true],
      ["http://[::1]/", true],
      ["http://[0:0:0:0:0:0:0:1]/", true],
      ["http://[::ffff:127.0.0.1]/", true],
      ["http://[::]/", true],
      ["http://10.0.0.1/", true],
      ["http://192.168.0.1:8080/x", true],
      ["http://169.254.169.254/latest/meta-data/", true],
      ["http://[::ffff:169.254.169.254]/", true],
      ["http://[fd00:ec2::254]/", true],
      ["http://[fe80::1]/", true],
      ["http://100.64.0.1/", true],
      ["http://224.0.0.1/", true],
      ["http://255.255.255.255/", true],
      ["http://localhost/", true],
      ["http://LOCALHOST./", true],
      ["http://api.localhost/", true],
      // needs DNS (or is public)
      ["https://example.com/", false],
      ["https://localhost.example.com/", false],
      ["https://169.254.169.254.nip.io/", false],
      ["https://8.8.8.8/", false],
      ["https://[2606:4700:4700::1111]/", false],
      ["https://[::ffff:8.8.8.8]/", false]
    ] as const
  )("%s -> %s", (s, forbidden) => {
    expect(hostIsLiteralForbidden(url(s))).toBe(forbidden)
  })

  it("hostAddress gives the literal address, or undefined for a name", () => {
    expect(hostAddress(url("http://0x7f.1/"))).toBe("127.0.0.1")
    expect(hostAddress(url("http://[::ffff:127.0.0.1]/"))).toBe("::ffff:7f00:1")
    expect(hostAddress(url("https://example.com/"))).toBeUndefined()
    expect(hostAddress(url("https://localhost/"))).toBeUndefined()
  })

  it("any decimal or hex spelling of an IPv4 host is judged like its dotted form", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        const dotted = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".")
        const expected = isForbiddenAddress(dotted)
        expect(hostIsLiteralForbidden(url(`http://${n}/`))).toBe(expected)
        expect(hostIsLiteralForbidden(url(`http://0x${n.toString(16)}/`))).toBe(expected)
        expect(hostIsLiteralForbidden(url(`http://[::ffff:${dotted}]/`))).toBe(expected)
      }),
      { numRuns: 2000 }
    )
  })
})
