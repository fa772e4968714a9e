import { describe, expect, it } from "vitest"
import { isFinished, progressLine } from "../src/cli/JobProgress.ts"

const job = (status: string, processedRows: number, totalRows: number, skippedRows = 0) => ({
  status,
  progress: { totalRows, processedRows, importedRows: processedRows - skippedRows, skippedRows }
})

describe("the CLI's job progress line", () => {
  it("fills the bar in proportion to the rows processed", () => {
    expect(progressLine(job("queued", 0, 10_000), 10)).toBe("[----------]   0% 0/10,000 rows · 0 skipped · queued")
    expect(progressLine(job("running", 2_500, 10_000, 3), 10)).toBe(
      "[###-------]  25% 2,500/10,000 rows · 3 skipped · running"
    )
    expect(progressLine(job("succeeded", 0, 0), 4)).toBe("[####] 100% 0 rows · 0 skipped · succeeded")
  })
  it("never overflows, and knows when a job has ended", () => {
    expect(progressLine(job("running", 12, 10), 5)).toContain("[#####] 100%")
    expect(isFinished(job("failed", 1, 2))).toBe(true)
    expect(isFinished(job("running", 1, 2))).toBe(false)
  })
})
