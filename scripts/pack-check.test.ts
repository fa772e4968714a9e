/**
 * Runs `scripts/pack-check.ts` (build, pack, install the tarballs outside the workspace, import, embed, type-check,
 * serve from the bin, client-only install) as part of `npm test`, so CI's summary counts it.
 */
import { execFile } from "node:child_process"
import * as Path from "node:path"
import { promisify } from "node:util"
import { expect, it } from "vitest"

it("the packed packages install and run outside the workspace", { timeout: 900_000 }, async () => {
  const env = { ...process.env }
  delete env["NODE_OPTIONS"]
  const result = await promisify(execFile)(process.execPath, [Path.join(import.meta.dirname, "pack-check.ts")], {
    env,
    maxBuffer: 16 * 1024 * 1024
  }).catch((error: { stdout: string; stderr: string }) => error)
  expect(result.stdout + result.stderr).toContain("pack-check: all steps passed")
})
