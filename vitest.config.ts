import { randomBytes } from "node:crypto"
import { defineConfig } from "vitest/config"

// Under CI the JSON report feeds the closing `N passed, M failed` line of .ci/run.
const ci = process.env["CI"] === "true"

// Workspace packages resolve each other's TypeScript sources through this export condition, so development needs no
// build; published packages resolve `dist/`. Child processes the tests start (servers, dispatchers) inherit it.
const sourceCondition = "@feedback/source"
if (!(process.env["NODE_OPTIONS"] ?? "").includes(`--conditions=${sourceCondition}`)) {
  process.env["NODE_OPTIONS"] = `${process.env["NODE_OPTIONS"] ?? ""} --conditions=${sourceCondition}`.trim()
}

// One id per run, inherited by every worker: the run's test databases are named after it, and its teardown drops them.
process.env["FEEDBACK_TEST_RUN"] ??= randomBytes(4).toString("hex")

export default defineConfig({
  resolve: { conditions: [sourceCondition, "import", "module", "node", "default"] },
  // Without "import": vitest hands these conditions to its workers as `--conditions`, and there they apply to
  // `require()` too, which then loads a dual package's ESM half (`is-promise` inside Express's router, for one).
  ssr: {
    resolve: { conditions: [sourceCondition, "node", "default"], externalConditions: [sourceCondition] }
  },
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts", "scripts/*.test.ts", "bench/support/*.test.ts"],
    globalSetup: ["scripts/test-databases.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ci ? ["default", "json"] : ["default"],
    ...(ci ? { outputFile: { json: ".test-results/vitest.json" } } : {})
  }
})
