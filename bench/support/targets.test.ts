/**
 * `npm run bench -- all`'s verdicts (`targets.ts`): what the benchmarks record and how each row is judged against its
 * target. The benchmarks themselves are not run here (they take minutes and measure this machine).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { meets, recordRow, summarize, targets } from "./targets.ts"

let dir: string
let file: string
const previous = process.env["BENCH_RESULTS"]
beforeEach(() => {
  dir = mkdtempSync(Path.join(tmpdir(), "bench-targets-"))
  file = Path.join(dir, "results.ndjson")
  process.env["BENCH_RESULTS"] = file
})
afterEach(() => {
  if (previous === undefined) delete process.env["BENCH_RESULTS"]
  else process.env["BENCH_RESULTS"] = previous
  rmSync(dir, { recursive: true, force: true })
})

const lineOf = (id: keyof typeof targets) => summarize(file).lines.find((l) => l[0] === targets[id].row)!

describe("bench targets", () => {
  it("a lower bound is met at or above it, an upper bound at or below it", () => {
    expect(meets(targets["hotpath"], 0.67)).toBe(true)
    expect(meets(targets["hotpath"], 0.669)).toBe(false)
    expect(meets(targets["lists-first"], 1.3)).toBe(true)
    expect(meets(targets["lists-first"], 1.31)).toBe(false)
  })

  it("judges each recorded row, shows its floor and note, and counts the rows met", () => {
    recordRow("hotpath", 0.22, { floor: 0.55 })
    recordRow("import", 1.41, { note: "embedded PGlite" })
    recordRow("search-no-match", 4.91)
    const { lines, met, total } = summarize(file)
    expect(total).toBe(Object.keys(targets).length)
    expect(lines).toHaveLength(total)
    expect(lineOf("hotpath")).toEqual([targets["hotpath"].row, "≥ 0.67×", "0.22×", "0.55×", "not met"])
    expect(lineOf("import")).toEqual([targets["import"].row, "≤ 1.50×", "1.41×", "", "met (embedded PGlite)"])
    expect(lineOf("search-no-match")).toEqual([targets["search-no-match"].row, "≤ 50.0 ms", "4.9 ms", "", "met"])
    expect(met).toBe(2)
  })

  it("a row no benchmark recorded says which command measures it; one it could not measure says so", () => {
    recordRow("idle", Number.NaN)
    expect(lineOf("webhooks-postgres")[4]).toBe(
      "not measured (npm run bench -- webhooks throughput, with BENCH_DATABASE_URL)"
    )
    expect(lineOf("hotpath")[4]).toBe("not measured (npm run bench -- hotpath)")
    expect(lineOf("idle")[2]).toBe("n/a")
    expect(lineOf("idle")[4]).toBe("could not be measured")
    expect(summarize(file).met).toBe(0)
  })

  it("a miss that rounds to the target is shown with the digits that tell them apart", () => {
    recordRow("import", 1.5031)
    recordRow("bulk-update", 1.4999)
    expect(lineOf("import").slice(2)).toEqual(["1.5031×", "", "not met"])
    expect(lineOf("bulk-update").slice(2)).toEqual(["1.50×", "", "met"])
  })

  it("the last measurement of a row is the one judged", () => {
    recordRow("webhooks-memory", 0.5)
    recordRow("webhooks-memory", 0.64)
    expect(lineOf("webhooks-memory")[4]).toBe("met")
  })

  it("records nothing when BENCH_RESULTS is unset, as when a benchmark runs on its own", () => {
    delete process.env["BENCH_RESULTS"]
    recordRow("hotpath", 0.9)
    expect(() => readFileSync(file)).toThrow()
    expect(summarize(file).met).toBe(0)
  })
})
