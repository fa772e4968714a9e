/**
 * `npm run bench -- <name> [args…]` runs `bench/<name>.ts` in a fresh Node process (the same Node as this one).
 * `npm run bench -- all` runs every benchmark that measures a row of issue 14's table (and issue 17's jobs), one
 * after the other, then prints each row's target, measurement, floor and verdict (`support/targets.ts`). Rows that
 * need a PostgreSQL server are skipped, saying so, without BENCH_DATABASE_URL or TEST_DATABASE_URL.
 * Without a name it lists the benchmarks.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { summarize } from "./support/targets.ts"

const dir = import.meta.dirname
const available = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && f !== "run.ts")
  .map((f) => f.slice(0, -3))
  .sort()

const run = (name: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv = process.env) =>
  spawnSync(process.execPath, [Path.join(dir, `${name}.ts`), ...args], { stdio: "inherit", env }).status ?? 1

/** Every run of `all`, in order; `server`: needs a PostgreSQL server. Webhooks run once per store. */
const plan: ReadonlyArray<
  {
    readonly name: string
    readonly args: ReadonlyArray<string>
    readonly server?: boolean
    readonly store?: "memory" | "server"
  }
> = [
  { name: "hotpath", args: [] },
  { name: "hotpath", args: ["pg"], server: true },
  { name: "refusals", args: [] },
  { name: "ratelimit", args: ["http"] },
  { name: "webhooks", args: ["throughput"], store: "memory" },
  { name: "webhooks", args: ["throughput"], server: true, store: "server" },
  { name: "reviews-list", args: [], server: true },
  { name: "reviews-write", args: [] },
  { name: "jobs", args: [] },
  { name: "enrol", args: [], server: true },
  { name: "send", args: [], server: true },
  { name: "idle", args: [], server: true },
  { name: "widget", args: [] },
  { name: "storefront", args: [], server: true }
]

const all = () => {
  const server = process.env["BENCH_DATABASE_URL"] || process.env["TEST_DATABASE_URL"] || undefined
  const scratch = mkdtempSync(Path.join(tmpdir(), "bench-all-"))
  const results = Path.join(scratch, "results.ndjson")
  const failed: Array<string> = []
  try {
    for (const step of plan) {
      const label = [step.name, ...step.args].join(" ") + (step.store === undefined ? "" : ` (${step.store})`)
      if (step.server === true && server === undefined) {
        console.log(`\n=== ${label}: skipped, it needs a PostgreSQL server (set BENCH_DATABASE_URL)`)
        continue
      }
      console.log(`\n=== ${label}`)
      const env: NodeJS.ProcessEnv = { ...process.env, BENCH_RESULTS: results }
      // The webhooks benchmark picks its store by BENCH_DATABASE_URL alone.
      if (step.store === "memory") env["BENCH_DATABASE_URL"] = ""
      if (step.store === "server") env["BENCH_DATABASE_URL"] = server
      if (run(step.name, step.args, env) !== 0) failed.push(label)
    }
    const { lines, met, total } = summarize(results)
    console.log(
      "\nIssue 14's rows (and issue 17's jobs, issue 32's surveys): target, this run's measurement, the floor measured beside it (docs/DECISIONS.md §43)\n"
    )
    const header = ["row", "target", "measured", "floor", "verdict"]
    const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)))
    for (const l of [header, widths.map((w) => "-".repeat(w)), ...lines]) {
      console.log(l.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd())
    }
    if (failed.length > 0) console.log(`\nbenchmarks that exited with an error: ${failed.join(", ")}`)
    console.log(`\n${met} of ${total} rows met`)
    return failed.length === 0 ? 0 : 1
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

const [name, ...args] = process.argv.slice(2)
if (name === "all") process.exit(all())
if (name === undefined || !available.includes(name)) {
  if (name !== undefined) console.error(`no benchmark named "${name}"`)
  console.error(`usage: npm run bench -- <name> [args] | all\navailable: ${available.join(", ")}\nsee bench/README.md`)
  process.exit(name === undefined ? 0 : 1)
}
process.exit(run(name, args))
