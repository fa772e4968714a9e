/**
 * Regenerates the README's pictures (`docs/images/widget-demo.png`, `docs/images/survey-page.png`) from the browser
 * tests that exercise what they show: runs those tests in Chromium with `UPDATE_SCREENSHOTS=1`, so every picture is
 * a page the test has just checked.
 *
 *   npm run screenshots
 */
import { spawnSync } from "node:child_process"
import { statSync } from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const pictures = ["widget-demo.png", "survey-page.png"].map((name) => Path.join(root, "docs", "images", name))
const started = Date.now()
const result = spawnSync(
  process.execPath,
  [
    Path.join(root, "node_modules", "vitest", "vitest.mjs"),
    "run",
    "packages/adapter-http/test/Widget.browser.test.ts",
    "packages/adapter-http/test/Survey.browser.test.ts"
  ],
  { cwd: root, stdio: "inherit", env: { ...process.env, UPDATE_SCREENSHOTS: "1" } }
)
if (result.status !== 0) process.exit(result.status ?? 1)
const stale = pictures.filter((path) => {
  try {
    return statSync(path).mtimeMs < started
  } catch {
    return true
  }
})
if (stale.length > 0) {
  console.error(`not written (is Chromium installed?): ${stale.map((p) => Path.relative(root, p)).join(", ")}`)
  process.exit(1)
}
console.log(`written: ${pictures.map((p) => Path.relative(root, p)).join(", ")}`)
