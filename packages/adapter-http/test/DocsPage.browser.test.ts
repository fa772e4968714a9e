/**
 * The API reference as a reader sees it (docs/DECISIONS.md §19): `/docs` opened in headless Chromium (Debian's
 * `chromium`, driven by playwright-core), served by the real Node handler on a loopback port. The page must render
 * every operation of the served OpenAPI document and must not request anything from another origin: every request
 * that leaves the server's origin is recorded and refused.
 *
 * Without Chromium the test is skipped, with the reason; under CI=true (where `.ci/run` installs it) a missing
 * Chromium fails instead.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { Kernel } from "@feedback/core"
import { Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeNodeHandler, type NodeHandler } from "../src/server/NodeHandler.ts"
import { browserTitle, CHROMIUM, CHROMIUM_FLAGS, chromiumPresent } from "./Chromium.ts"

describe.skipIf(!chromiumPresent)(browserTitle("/docs in headless Chromium"), () => {
  let api: NodeHandler
  let server: Server
  let origin: string
  beforeAll(async () => {
    api = await makeNodeHandler(Layer.merge(MemoryStoreLayer, Kernel.IdGenerator.uuidV7), { workers: false })
    server = createServer(api.handler)
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve))
    await api.dispose()
  })

  it("renders every operation of the OpenAPI document, compressed, loading nothing from elsewhere", {
    timeout: 180_000
  }, async () => {
    const spec = await (await fetch(`${origin}/openapi.json`)).json() as {
      info: { title: string }
      paths: Record<string, Record<string, unknown>>
    }
    const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
      Object.keys(item).filter((k) => ["get", "post", "put", "patch", "delete"].includes(k)).map((method) => ({
        method,
        path
      }))
    )
    expect(operations.length).toBeGreaterThan(20)

    const profile = mkdtempSync(Path.join(tmpdir(), "fb-chromium-"))
    const browser = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS
    })
    try {
      const elsewhere: Array<string> = []
      await browser.route("**/*", (route) => {
        const url = route.request().url()
        if (url.startsWith(`${origin}/`) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue()
        elsewhere.push(url)
        return route.abort()
      })
      const page = await browser.newPage()
      const response = await page.goto(`${origin}/docs`, { waitUntil: "load", timeout: 120_000 })
      expect(response?.status()).toBe(200)
      // Chromium accepts Brotli, so that is what it got.
      expect(response?.headers()["content-encoding"]).toBe("br")
      expect(await page.title()).toBe(spec.info.title)

      // Rendered: the sidebar lists one entry per operation, and the reference shows every path.
      await page.waitForFunction(
        (count) => {
          // Runs in the page (the type check has no DOM library, hence the loose types).
          const sidebar = (globalThis as any).document.querySelector("aside[aria-label^='Sidebar']") as {
            innerText: string
          } | null
          return sidebar !== null && (sidebar.innerText.match(/HTTP METHOD:/g) ?? []).length >= count
        },
        operations.length,
        { timeout: 120_000, polling: 500 }
      )
      // The reference renders after the sidebar, in pieces: wait until it shows every path (or give up and say
      // which are missing below).
      const paths = [...new Set(operations.map(({ path }) => path))]
      await page.waitForFunction(
        (wanted) => {
          const shown = (globalThis as any).document.body.innerText as string
          return wanted.every((path) => shown.includes(path))
        },
        paths,
        { timeout: 60_000, polling: 500 }
      ).catch(() => undefined)
      const text = await page.evaluate(() => (globalThis as any).document.body.innerText as string)
      const missing = operations.filter(({ path }) => !text.includes(path))
      expect(missing, "operations the rendered page does not show").toEqual([])
      expect(elsewhere, "requests that left the server's origin").toEqual([])
    } finally {
      await browser.close()
      rmSync(profile, { recursive: true, force: true })
    }
  })
})
