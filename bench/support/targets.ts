/**
 * The rows of issue 14's table (and issue 17's two job targets, issue 32's three, issue 33's four) as data, and where each benchmark records what it
 * measured for them. `npm run bench -- all` runs every benchmark with `BENCH_RESULTS` naming a file, then reads the
 * file back and prints one verdict per row (`summarize`). A benchmark run on its own records nothing.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs"

export interface Target {
  /** The row as the issue words it. */
  readonly row: string
  readonly bound: "atLeast" | "atMost"
  readonly value: number
  readonly unit: "×" | " ms" | "/s"
  /** The benchmark that measures it: `npm run bench -- <how>`. */
  readonly how: string
  /** Measured only with a PostgreSQL server (`BENCH_DATABASE_URL`). */
  readonly server?: boolean
}

export const targets = {
  "hotpath": {
    row: "GET /organization, memory, vs bare node:http (req/s)",
    bound: "atLeast",
    value: 0.67,
    unit: "×",
    how: "hotpath"
  },
  "hotpath-pg": {
    row: "GET /reviews/{id}, PostgreSQL, vs node:http + pg by hand (req/s)",
    bound: "atLeast",
    value: 0.9,
    unit: "×",
    how: "hotpath pg",
    server: true
  },
  "refusals-memory": {
    row: "a 429's server CPU vs an admitted request's, memory",
    bound: "atMost",
    value: 0.25,
    unit: "×",
    how: "refusals"
  },
  "refusals-pglite": {
    row: "a 429's server CPU vs an admitted request's, embedded PGlite",
    bound: "atMost",
    value: 0.25,
    unit: "×",
    how: "refusals"
  },
  "refusals-postgres": {
    row: "a 429's server CPU vs an admitted request's, PostgreSQL",
    bound: "atMost",
    value: 0.25,
    unit: "×",
    how: "refusals",
    server: true
  },
  "limiter-pglite": {
    row: "embedded PGlite: limiter on vs off (req/s)",
    bound: "atLeast",
    value: 0.9,
    unit: "×",
    how: "ratelimit http"
  },
  "lists-first": {
    row: "GET /reviews, 1 M reviews, first page vs the page statement",
    bound: "atMost",
    value: 1.3,
    unit: "×",
    how: "reviews-list",
    server: true
  },
  "lists-page100": {
    row: "GET /reviews, page 100 vs the page statement",
    bound: "atMost",
    value: 1.3,
    unit: "×",
    how: "reviews-list",
    server: true
  },
  "lists-filter": {
    row: "GET /reviews, filtered vs the page statement",
    bound: "atMost",
    value: 1.3,
    unit: "×",
    how: "reviews-list",
    server: true
  },
  "lists-includes": {
    row: "include=customer,product,collisions vs the page statement",
    bound: "atMost",
    value: 2,
    unit: "×",
    how: "reviews-list",
    server: true
  },
  "search-no-match": {
    row: "search with no match on 1 M reviews",
    bound: "atMost",
    value: 50,
    unit: " ms",
    how: "reviews-list",
    server: true
  },
  "import": {
    row: "import of 10,000 rows vs one multi-row INSERT",
    bound: "atMost",
    value: 1.5,
    unit: "×",
    how: "reviews-write"
  },
  "bulk-update": {
    row: "bulk-update of 100,000 reviews vs one UPDATE",
    bound: "atMost",
    value: 1.5,
    unit: "×",
    how: "reviews-write"
  },
  "webhooks-memory": {
    row: "webhook deliveries/s vs plain keep-alive POSTs, memory",
    bound: "atLeast",
    value: 0.6,
    unit: "×",
    how: "webhooks throughput"
  },
  "webhooks-postgres": {
    row: "webhook deliveries/s vs plain keep-alive POSTs, PostgreSQL",
    bound: "atLeast",
    value: 0.6,
    unit: "×",
    how: "webhooks throughput",
    server: true
  },
  "widget-render": {
    row: "issue 34: /demo widget rendered after embed.js loads, loopback, Chromium (median)",
    bound: "atMost",
    value: 300,
    unit: " ms",
    how: "widget"
  },
  "idle": {
    row: "idle server: statements per second to PostgreSQL",
    bound: "atMost",
    value: 1,
    unit: "/s",
    how: "idle",
    server: true
  },
  "job-import": {
    row: "issue 17: import job of 100,000 rows vs one multi-row INSERT",
    bound: "atMost",
    value: 2,
    unit: "×",
    how: "jobs"
  },
  "job-export": {
    row: "issue 17: export job vs COPY … TO STDOUT",
    bound: "atMost",
    value: 2,
    unit: "×",
    how: "jobs",
    server: true
  },
  "enrol": {
    row: "issue 32: bulk-update of 100,000 orders to fulfilled vs one INSERT … SELECT of their surveys",
    bound: "atMost",
    value: 2,
    unit: "×",
    how: "enrol",
    server: true
  },
  "enrol-cpu": {
    row: "issue 32: the same bulk-update's CPU (database + server) vs the INSERT … SELECT's (database)",
    bound: "atMost",
    value: 2,
    unit: "×",
    how: "enrol",
    server: true
  },
  "send": {
    row: "issue 32: 10,000 survey emails by the worker vs nodemailer directly",
    bound: "atLeast",
    value: 0.5,
    unit: "×",
    how: "send",
    server: true
  },
  "idle-flows": {
    row: "issue 32: idle server with active flows: statements per second",
    bound: "atMost",
    value: 1,
    unit: "/s",
    how: "idle",
    server: true
  },
  "storefront-ratings": {
    row: "issue 33: GET /storefront/ratings, 24 products, 1 M reviews, vs its HttpApi floor (req/s)",
    bound: "atLeast",
    value: 0.7,
    unit: "×",
    how: "storefront",
    server: true
  },
  "storefront-reviews": {
    row: "issue 33: a product's first page of storefront reviews vs its HttpApi floor (req/s)",
    bound: "atLeast",
    value: 0.7,
    unit: "×",
    how: "storefront",
    server: true
  },
  "storefront-304": {
    row: "issue 33: a 304 revalidation's CPU vs the full answer's (the worse of ratings and reviews)",
    bound: "atMost",
    value: 0.3,
    unit: "×",
    how: "storefront",
    server: true
  },
  "storefront-429": {
    row: "issue 33: a refused storefront request's CPU vs an admitted one's",
    bound: "atMost",
    value: 0.25,
    unit: "×",
    how: "storefront",
    server: true
  }
} as const satisfies Record<string, Target>

export type RowId = keyof typeof targets

export interface RowResult {
  readonly id: RowId
  /** `null`: the benchmark ran but could not measure it (e.g. no CPU figures on this OS). */
  readonly value: number | null
  /** The same work's floor, measured in the same run (docs/DECISIONS.md §43), where the benchmark has one. */
  readonly floor?: number | undefined
  /** Where it ran, when the row could run elsewhere than its wording says (embedded PGlite for a server). */
  readonly note?: string | undefined
}

export const meets = (target: Target, value: number): boolean =>
  target.bound === "atLeast" ? value >= target.value : value <= target.value

/** Appends a measurement to `BENCH_RESULTS`, when set. */
export const recordRow = (id: RowId, value: number | undefined, extra: Omit<RowResult, "id" | "value"> = {}): void => {
  const file = process.env["BENCH_RESULTS"]
  if (file === undefined || file === "") return
  const result: RowResult = { id, value: value === undefined || !Number.isFinite(value) ? null : value, ...extra }
  appendFileSync(file, JSON.stringify(result) + "\n")
}

const shown = (target: Target, value: number | null | undefined, digits = target.unit === " ms" ? 1 : 2): string =>
  value === null || value === undefined ? "n/a" : `${value.toFixed(digits)}${target.unit}`

/** The value as shown, with more digits when rounding would make a missed target look met (1.503 against 1.5). */
const shownAgainst = (target: Target, value: number | null | undefined): string => {
  const plain = shown(target, value)
  return value !== null && value !== undefined && !meets(target, value) && plain === shown(target, target.value)
    ? shown(target, value, 4)
    : plain
}

/**
 * One line per row of `targets`, from the results in `file` (the last measurement of a row wins), and the count of
 * rows met. A row no benchmark recorded is "not measured", with the command that measures it.
 */
export const summarize = (
  file: string
): { readonly lines: ReadonlyArray<Array<string>>; readonly met: number; readonly total: number } => {
  const results = new Map<RowId, RowResult>()
  if (existsSync(file)) {
    for (const line of readFileSync(file, "utf8").split("\n")) {
      if (line.trim() === "") continue
      const result = JSON.parse(line) as RowResult
      if (result.id in targets) results.set(result.id, result)
    }
  }
  let met = 0
  const lines = (Object.keys(targets) as Array<RowId>).map((id) => {
    const target: Target = targets[id]
    const result = results.get(id)
    const verdict = result === undefined
      ? `not measured (npm run bench -- ${target.how}${target.server === true ? ", with BENCH_DATABASE_URL" : ""})`
      : result.value === null
      ? "could not be measured"
      : meets(target, result.value)
      ? "met"
      : "not met"
    if (verdict === "met") met++
    return [
      target.row,
      `${target.bound === "atLeast" ? "≥" : "≤"} ${shown(target, target.value)}`,
      shownAgainst(target, result?.value),
      result?.floor === undefined ? "" : shown(target, result.floor),
      verdict + (result?.note === undefined ? "" : ` (${result.note})`)
    ]
  })
  return { lines, met, total: lines.length }
}
