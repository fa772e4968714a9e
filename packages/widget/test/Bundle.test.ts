/**
 * The widget bundle as the API serves it (shared DECISIONS §19): the committed `bundle/embed.js` is exactly what
 * esbuild makes of the sources today (rebuild with `npm run build:bundle -w packages/widget`), it stays within its
 * budget of 30 KB gzipped, and it holds nothing that evaluates text as code or names another origin.
 */
import { readFileSync } from "node:fs"
import { gzipSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { bundle, bundlePath } from "../scripts/build.ts"

const BUDGET_GZIPPED_BYTES = 30 * 1024

describe("the widget bundle", () => {
  const committed = readFileSync(bundlePath, "utf8")

  it("is the build of the current sources", async () => {
    expect(committed === (await bundle()), "bundle/embed.js is stale: npm run build:bundle -w packages/widget").toBe(
      true
    )
  })

  it("is at most 30 KB gzipped", () => {
    const gzipped = gzipSync(committed, { level: 9 }).byteLength
    expect(gzipped).toBeGreaterThan(1_000)
    expect(gzipped).toBeLessThanOrEqual(BUDGET_GZIPPED_BYTES)
  })

  it("evaluates no text as code, writes no markup, and names no other origin", () => {
    for (const forbidden of [/\beval\(/, /new Function\(/, /\.innerHTML\b/, /\.outerHTML\b/, /document\.write/]) {
      expect(committed).not.toMatch(forbidden)
    }
    // The only absolute URL is the SVG namespace, an identifier that is never fetched.
    const urls = committed.match(/\b(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^"'`\s)]*/gi) ?? []
    expect(urls).toEqual(["http://www.w3.org/2000/svg"])
  })
})
