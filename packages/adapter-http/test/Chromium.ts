/**
 * Headless Chromium for the browser tests (Debian's `chromium`, driven by playwright-core). Without it a browser test
 * is skipped with the reason; under CI=true (where `.ci/run` installs it, `.ci/chromium.sh`) a missing Chromium fails.
 */
import { existsSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"

export const CHROMIUM = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium"
export const chromiumPresent = existsSync(CHROMIUM)
if (!chromiumPresent && process.env["CI"] === "true") {
  throw new Error(`Chromium is missing at ${CHROMIUM}; CI installs it (.ci/chromium.sh)`)
}

/** The flags every browser test starts Chromium with (headless, no network of its own). */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** The describe title: the name, or why it is skipped. */
export const browserTitle = (name: string) =>
  chromiumPresent
    ? name
    : `${name} (skipped: no Chromium at ${CHROMIUM}; apt-get install -y chromium, or set CHROMIUM_PATH)`

export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS })

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<string>
}

/**
 * The page's serious and critical accessibility violations by axe-core (WCAG 2 A/AA rules), shadow roots included.
 * axe is evaluated through the DevTools protocol, so the page's CSP (`script-src 'self'`) stays as it is.
 */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<AxeViolation>> => {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as any).axe
    const result = await axe.run((globalThis as any).document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] }
    })
    return (result.violations as Array<any>).map((v) => ({
      id: v.id as string,
      impact: v.impact as string | null,
      help: v.help as string,
      nodes: (v.nodes as Array<any>).map((n) => JSON.stringify(n.target))
    }))
  })
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
}

/**
 * Under `UPDATE_SCREENSHOTS=1` (`npm run screenshots`), saves the page (or one element of it) as `docs/images/<name>`
 * for the README; otherwise does nothing. The pictures are what the browser test saw, never drawn by hand.
 */
export const screenshot = async (page: Page, name: string, selector?: string): Promise<void> => {
  if (process.env["UPDATE_SCREENSHOTS"] !== "1") return
  const path = Path.resolve(import.meta.dirname, "../../../docs/images", name)
  if (selector === undefined) await page.screenshot({ path, fullPage: true })
  else await page.locator(selector).screenshot({ path })
}
