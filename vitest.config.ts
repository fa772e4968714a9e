import { defineConfig } from "vitest/config"

// Under CI the JSON report feeds the closing `N passed, M failed` line of .ci/run.
const ci = process.env["CI"] === "true"

export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "examples/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ci ? ["default", "json"] : ["default"],
    ...(ci ? { outputFile: { json: ".test-results/vitest.json" } } : {})
  }
})
