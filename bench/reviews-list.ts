/**
 * GET /reviews on a large PostgreSQL data set: each scenario timed end to end through the real HTTP handler
 * (authentication, rate limiting, parsing, query, JSON encoding) and compared, in the same process, against the
 * same database, in the same run, with three baselines run directly (no HTTP):
 * - page: the store's page statement alone (for a search, its steps) — the issue's baseline;
 * - store: `ReviewRepository.list`, i.e. the page statement with its includes (one statement since
 *   docs/DECISIONS.md §33) and the row mapping;
 * - fixed + store: the statements every authenticated request runs first (key lookup, organization, rate-limit
 *   spend, through the same store services the middleware calls), then the store's list.
 * So HTTP / (fixed + store) is what the HTTP layer itself adds. Beside the wall times it prints this process's CPU time
 * per HTTP request and per page statement (medians), which a loaded machine disturbs less. See bench/README.md.
 *
 *   BENCH_DATABASE_URL (or TEST_DATABASE_URL)   PostgreSQL server; a fresh database is created and dropped
 *   BENCH_REVIEWS   (default 1,000,000)         reviews to generate
 *   BENCH_PRODUCTS  (default 10,000)            products they are spread over
 *   BENCH_RUNS      (default 20)                timed runs per scenario (after 3 warm-up runs)
 *   BENCH_KEEP=1                                keep the database afterwards (its URL is printed)
 */
import { Kernel, Organizations, RateLimits, Reviews } from "@feedback/core"
import {
  indexedSearchTerm,
  reviewPageRows,
  reviewPageStatement,
  searchCandidatesStatement
} from "@feedback/adapter-postgres"
import { untracedRequests } from "@feedback/adapter-http/server"
import { Effect, Result } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { DEFAULT_DATASET_START, datasetId } from "../packages/adapter-postgres/src/testing/ReviewDataset.ts"
import { interleaved, median, openDatasetHandler, positiveEnv } from "./support/dataset-handler.ts"
import { makeListFloor } from "./support/list-floor.ts"
import { type RowId, recordRow } from "./support/targets.ts"

const toQuery = (params: Kernel.ListParams) =>
  Object.entries(params).filter(([, v]) => v !== undefined).map(([k, v]) => `${k}=${encodeURIComponent(v!)}`).join("&")

async function main(): Promise<void> {
  const reviews = positiveEnv("BENCH_REVIEWS", 1_000_000)
  const runs = positiveEnv("BENCH_RUNS", 20)
  const bench = await openDatasetHandler()
  const { handler, runtime } = bench
  const floorDisposers: Array<() => Promise<void>> = []

  try {
    const { organizationId, plan, secretKey, cursorKey } = await runtime.runPromise(Effect.gen(function*() {
      // A ceiling the benchmark cannot exhaust: rate limiting is still charged on every request.
      const org = yield* Organizations.Organizations.use((o) =>
        o.createOrganization({ name: "Benchmark", apiRequestsPerMinute: 1_000_000 })
      )
      const key = yield* Organizations.Organizations.use((o) =>
        o.issueSecretKey(org.id, { permissions: ["reviews:read"] })
      )
      return {
        organizationId: org.id as Kernel.OrganizationId,
        plan: org.plan,
        secretKey: key.secretKey,
        cursorKey: yield* Kernel.CursorKey
      }
    }))
    await bench.generate(organizationId, "reviews-list")
    // The timed request reads the whole body (the server's work ends with its bytes); parsing it is the client's.
    const listRequest = (params: Kernel.ListParams) =>
      new Request(`http://bench/reviews?${toQuery(params)}`, { headers: { authorization: `Bearer ${secretKey}` } })
    const textOf =
      (label: string, serve: (request: Request) => Promise<Response>) => async (params: Kernel.ListParams) => {
        const res = await serve(listRequest(params))
        const text = await res.text()
        if (res.status !== 200) {
          throw new Error(`${label} GET /reviews?${toQuery(params)} answered ${res.status}: ${text}`)
        }
        return text
      }
    const httpText = textOf("", (request) => handler(request))
    const http = async (params: Kernel.ListParams) =>
      JSON.parse(await httpText(params)) as { data: Array<{ id: string }>; nextCursor: string | null }
    const parse = (params: Kernel.ListParams) => {
      const parsed = Kernel.parseListRequest(params, Reviews.reviewListEndpoint, { key: cursorKey, organizationId })
      if (Result.isFailure(parsed)) throw new Error(parsed.failure.message)
      return parsed.success
    }
    // What a floor reads: the page statement's rows or, with includes, the store's list (its one statement reads them).
    const floorRead = (request: ReturnType<typeof parse>) =>
      request.include.length === 0
        ? Effect.orDie(Effect.map(
          Effect.flatMap(SqlClient.SqlClient, (sql) => reviewPageRows(sql, organizationId, request)),
          (page): unknown => page.rows
        ))
        : Reviews.ReviewRepository.use((r) => r.list(organizationId, request))
    // The floors of bench/support/list-floor.ts: an HttpApi endpoint with no middleware over the same read.
    const built = await bench.built()
    const [floor, floorSpend] = [false, true].map((spend) => {
      const made = makeListFloor(built, {
        secretKey,
        organizationId,
        plan,
        parse: (query) => parse(query as Kernel.ListParams),
        read: floorRead,
        spend
      })
      floorDisposers.push(made.dispose)
      return textOf("floor", (request) => made.handler(request, untracedRequests as Parameters<typeof made.handler>[1]))
    }) as [ReturnType<typeof textOf>, ReturnType<typeof textOf>]
    // No framework at all: the same Request, key hash, read, JSON text and Response by hand.
    const bareHash = createHash("sha256").update(secretKey).digest("hex")
    const bare = async (params: Kernel.ListParams) => {
      const request = listRequest(params)
      const auth = request.headers.get("authorization") ?? ""
      if (createHash("sha256").update(auth.slice(7)).digest("hex") !== bareHash) throw new Error("bare: unknown key")
      const query = Object.fromEntries(new URL(request.url).searchParams) as Kernel.ListParams
      const body = await runtime.runPromise(floorRead(parse(query)))
      return new Response(JSON.stringify(body), { headers: { "content-type": "application/json" } }).text()
    }
    // The statements the store runs (for a search, as many of its steps as the term needs), without the HTTP layer.
    const direct = (params: Kernel.ListParams) =>
      runtime.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) => reviewPageRows(sql, organizationId, parse(params)))
      )
    // The store's whole list (the page with its includes in one statement, row mapping), without and with the statements
    // every authenticated request runs before it (what the secret-key middleware calls: key + organization, spend).
    const listKey = RateLimits.endpointKey("GET", "/reviews")
    const store = (params: Kernel.ListParams) =>
      runtime.runPromise(Reviews.ReviewRepository.use((r) => r.list(organizationId, parse(params))))
    const fixedAndStore = (params: Kernel.ListParams) =>
      runtime.runPromise(Effect.gen(function*() {
        const { organization } = yield* Organizations.Organizations.use((o) => o.authenticateSecretKey(secretKey))
        const decision = yield* RateLimits.RateLimitRepository.use((r) =>
          r.spend(organization.id, RateLimits.bucketsForKey(listKey, organization.plan), RateLimits.costOfKey(listKey))
        )
        if (decision._tag !== "Admitted") throw new Error("the benchmark's organization was refused")
        return yield* Reviews.ReviewRepository.use((r) => r.list(organizationId, parse(params)))
      }))
    const planOf = async (params: Kernel.ListParams) => {
      const request = parse(params)
      const statement = indexedSearchTerm(request.search)
        ? searchCandidatesStatement(organizationId, request.search)
        : reviewPageStatement(organizationId, request)
      const rows = await runtime.runPromise(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql.unsafe<Record<string, unknown>>(`EXPLAIN (FORMAT JSON) ${statement.text}`, statement.params)
        )
      )
      const raw = Object.values(rows[0]!)[0]
      const plan = (typeof raw === "string" ? JSON.parse(raw) : raw) as Array<{ Plan: any }>
      const names: Array<string> = []
      const visit = (n: any) => {
        names.push(`${n["Node Type"]}${n["Index Name"] === undefined ? "" : ` ${n["Index Name"]}`}`)
        for (const c of n.Plans ?? []) visit(c)
      }
      visit(plan[0]!.Plan)
      return names.join(" > ")
    }

    // Page 100: follow nextCursor through 99 pages, as a client would.
    const w0 = performance.now()
    let cursor: string | null = null
    for (let page = 1; page < 100; page++) {
      const body: { nextCursor: string | null } = await http(
        cursor === null ? { limit: "50" } : { limit: "50", cursor }
      )
      cursor = body.nextCursor
      if (cursor === null) break
    }
    const walkMs = performance.now() - w0

    const since = new Date(Date.parse(DEFAULT_DATASET_START) + Math.floor(reviews / 2) * 1000).toISOString()
    // `row`: the row of issue 14's table the scenario measures (`npm run bench -- all`); `size` notes another size.
    const size = reviews === 1_000_000 ? {} : { note: `${reviews.toLocaleString("en-US")} reviews` }
    const scenarios: Array<
      { readonly name: string; readonly params: Kernel.ListParams; readonly runs?: number; readonly row?: RowId }
    > = [
      { name: "first page (limit=50)", params: { limit: "50" }, row: "lists-first" },
      ...(cursor === null
        ? []
        : [{ name: "page 100 via cursors", params: { limit: "50", cursor }, row: "lists-page100" as const }]),
      {
        name: "filter product.id + published + createdAt $gte",
        params: {
          limit: "50",
          filter: JSON.stringify({
            "product.id": datasetId(organizationId, "p", 42),
            published: true,
            createdAt: { $gte: since }
          })
        },
        row: "lists-filter"
      },
      { name: "search \"amazing\"", params: { limit: "50", search: "amazing" } },
      {
        name: "search with no match (worst case)",
        params: { limit: "50", search: "no such words" },
        runs: 3,
        row: "search-no-match"
      },
      {
        name: "first page, include=customer,product,collisions",
        params: { limit: "50", include: "customer,product,collisions" },
        row: "lists-includes"
      }
    ]

    const rows: Array<Record<string, string | number>> = []
    const plans: Array<string> = []
    for (const s of scenarios) {
      const n = s.runs ?? runs
      const count = (await http(s.params)).data.length
      // The process's CPU time per call beside the wall time: steadier when other work loads the machine, and it
      // leaves out the database's share (bench/README.md).
      const { cpu, wall } = await interleaved(
        {
          h: () => httpText(s.params),
          d: () => direct(s.params),
          st: () => store(s.params),
          f: () => fixedAndStore(s.params),
          fl: () => floor(s.params),
          fs: () => floorSpend(s.params),
          b: () => bare(s.params)
        },
        n,
        3
      )
      const [h, d, st, f] = [median(wall.h), median(wall.d), median(wall.st), median(wall.f)]
      const [fl, fs, b] = [median(wall.fl), median(wall.fs), median(wall.b)]
      const [hCpu, dCpu] = [median(cpu.h), median(cpu.d)]
      // The search's row is a time, the others a ratio to the page statement; the floor is the one without a framework.
      if (s.row === "search-no-match") recordRow(s.row, h, size)
      else if (s.row !== undefined) recordRow(s.row, h / d, { floor: b / d, ...size })
      rows.push({
        scenario: s.name,
        rows: count,
        "HTTP ms": h.toFixed(2),
        "page ms": d.toFixed(2),
        "store ms": st.toFixed(2),
        "fixed+store ms": f.toFixed(2),
        "HTTP/page": (h / d).toFixed(2),
        "HTTP/(fixed+store)": (h / f).toFixed(2),
        "floor/page": (fl / d).toFixed(2),
        "floor+spend/page": (fs / d).toFixed(2),
        "bare/page": (b / d).toFixed(2),
        "CPU µs HTTP/page": `${hCpu.toFixed(0)}/${dCpu.toFixed(0)}`,
        "CPU HTTP/page": (hCpu / dCpu).toFixed(2)
      })
      plans.push(`  ${s.name}: ${await planOf(s.params)}`)
    }
    console.log(
      `  (medians of ${runs} interleaved runs after 3 warm-ups; walking pages 1-99 to get the page-100 cursor took ${
        (walkMs / 1000).toFixed(2)
      } s)`
    )
    console.table(rows)
    console.log(
      "  page: the store's page statement alone (for a search, its steps; see PgReviewStore.SEARCH_WINDOW), the issue's baseline."
    )
    console.log(
      "  store: ReviewRepository.list (page and includes in one statement, row mapping). fixed+store: key lookup, organization and"
    )
    console.log(
      "  rate-limit spend first, as the middleware does. HTTP adds to that parsing, the Effect HTTP stack and JSON encoding."
    )
    console.log(
      "  CPU: this process's CPU time per call (median), HTTP and page statement; the database's own CPU is not in it."
    )
    console.log(
      "  floor: one Effect HttpApi endpoint, no middleware, the key found in a Map, the page statement (with includes: the"
    )
    console.log(
      "  store's list) and JSON.stringify; floor+spend: the same with the rate-limit spend overlapped (bench/support/list-floor.ts)."
    )
    console.log(
      "  bare: no framework: the web Request, the key's hash, the same read, JSON.stringify and the Response's text, by hand."
    )
    console.log("Query plans:")
    console.log(plans.join("\n"))
  } finally {
    await bench.close(floorDisposers)
  }
}

await main()
