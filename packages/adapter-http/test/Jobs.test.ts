/**
 * Import and export jobs over HTTP (docs/DECISIONS.md §20; shared §15): CSV and NDJSON streamed in, 202 with the job,
 * progress read back, `include=importJob`, the limits (413 naming them, nothing imported), media types, permissions
 * and cost, and an export downloaded as CSV that re-imports into a fresh organization as the same reviews. Memory,
 * and a PostgreSQL server when TEST_DATABASE_URL is set.
 */
import { MemoryStoreLayer } from "@feedback/adapter-memory"
import { PgStoreLayer } from "@feedback/adapter-postgres"
import { Jobs, type StoreServices } from "@feedback/core"
import type { Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { freshLayer, serverUrl } from "../../adapter-postgres/test/TestDatabase.ts"
import { makeTestServer, type TestServer } from "./TestServer.ts"

const stores: ReadonlyArray<readonly [string, () => Layer.Layer<StoreServices, unknown>]> = [
  ["memory", () => MemoryStoreLayer],
  ...(serverUrl === undefined ? [] : [["postgres server", () => freshLayer((t) => PgStoreLayer(t))] as const])
]

const csv = (rows: ReadonlyArray<ReadonlyArray<string>>) =>
  rows.map((r) => r.map((c) => /[",\r\n]/.test(c) ? `"${c.replaceAll("\"", "\"\"")}"` : c).join(",")).join("\r\n") +
  "\r\n"

const waitFor = async (server: TestServer, key: string, path: string) => {
  for (let i = 0; i < 400; i++) {
    const res = await server.request("GET", path, { token: key })
    if (res.body?.status === "succeeded" || res.body?.status === "failed") return res.body
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`job ${path} did not finish`)
}

const seedProducts = async (server: TestServer, key: string) => {
  for (const slug of ["mug", "cup"]) {
    const res = await server.request("POST", "/products", { token: key, body: { slug, title: slug.toUpperCase() } })
    expect(res.status).toBe(201)
  }
}

const importFile = (server: TestServer, key: string, query: string, body: string, contentType: string) =>
  server.request("POST", `/import-jobs?${query}`, {
    token: key,
    rawBody: body,
    headers: { "content-type": contentType }
  })

describe.each(stores)("import and export jobs over HTTP (%s)", (_name, makeStore) => {
  const server = makeTestServer(makeStore(), { jobs: { pollIntervalMs: 20, batchSize: 3 } })
  afterAll(() => server.dispose())

  it("a CSV review import: 202 with the queued job, imported in batches off the request path, include=importJob", async () => {
    const { key } = await server.provision()
    await seedProducts(server, key)
    const file = csv([
      [
        "externalId",
        "product",
        "rating",
        "title",
        "body",
        "customer",
        "published",
        "imageUrls",
        "metadata",
        "response"
      ],
      [
        "c1",
        "mug",
        "5",
        "Great, really",
        "Line one\nline two",
        "ann@example.com",
        "",
        "[\"https://img.example/a.jpg\"]",
        "{\"src\":\"old\"}",
        "Thanks"
      ],
      ["c2", "cup", "4", "", "", "", "false", "", "", ""],
      ["c3", "nope", "3", "", "", "", "", "", "", ""],
      ["c4", "mug", "seven", "", "", "", "", "", "", ""],
      ["c5", "mug", "2", "", "", "bob@example.com", "", "", "", ""]
    ])
    const created = await importFile(server, key, "type=reviews", file, "text/csv")
    expect(created.status, created.text).toBe(202)
    expect(created.headers.get("x-rate-limit-cost")).toBe("10")
    expect(created.body).toMatchObject({
      type: "reviews",
      action: "import",
      format: "csv",
      progress: { totalRows: 5, processedRows: 0 }
    })
    expect(["queued", "running", "succeeded"]).toContain(created.body.status)
    const job = await waitFor(server, key, `/import-jobs/${created.body.id}`)
    expect(job.status).toBe("succeeded")
    expect(job.progress).toEqual({ totalRows: 5, processedRows: 5, importedRows: 3, skippedRows: 2 })
    expect(job.skipped.map((s: any) => s.index)).toEqual([2, 3])
    expect(job.skipped[1].message).toMatch(/rating/)

    const list = await server.request("GET", "/reviews?include=importJob,files,response,customer&sort=createdAt", {
      token: key
    })
    const byExternal = new Map(list.body.data.map((r: any) => [r.externalId, r]))
    const c1: any = byExternal.get("c1")
    expect(c1.importJob).toEqual({
      id: created.body.id,
      type: "reviews",
      action: "import",
      row: 1,
      createdAt: created.body.createdAt
    })
    expect(c1.title).toBe("Great, really")
    expect(c1.body).toBe("Line one\nline two")
    expect(c1.files.map((f: any) => f.url)).toEqual(["https://img.example/a.jpg"])
    expect(c1.response.body).toBe("Thanks")
    expect(c1.customer.email).toBe("ann@example.com")
    expect(c1.metadata).toEqual({ src: "old" })
    expect((byExternal.get("c2") as any).published).toBe(false)
    expect((byExternal.get("c5") as any).importJob.row).toBe(5)
  })

  it("NDJSON products and customers; strict jobs fail whole; permissions by type", async () => {
    const { key } = await server.provision()
    const products = await importFile(
      server,
      key,
      "type=products",
      "{\"slug\":\"a\",\"title\":\"A\"}\n\n{\"slug\":\"b\",\"title\":\"B\"}\r\n",
      "application/x-ndjson"
    )
    expect(products.status, products.text).toBe(202)
    expect((await waitFor(server, key, `/import-jobs/${products.body.id}`)).progress.importedRows).toBe(2)
    const strict = await importFile(
      server,
      key,
      "type=customers&strict=true",
      "{\"email\":\"x@example.com\"}\n{\"email\":\"nope\"}\n",
      "application/x-ndjson"
    )
    const failed = await waitFor(server, key, `/import-jobs/${strict.body.id}`)
    expect(failed.status).toBe("failed")
    expect(failed.error.code).toBe("IMPORT_FAILED")
    expect(failed.error.message).toMatch(/Row 2/)
    const customers = await server.request("GET", "/customers", { token: key })
    expect(customers.body.data).toHaveLength(0)

    const readOnly = await server.provision({ permissions: ["reviews:read", "products:write"] })
    const forbidden = await importFile(server, readOnly.key, "type=reviews", "{}\n", "application/x-ndjson")
    expect(forbidden.status).toBe(403)
    expect(forbidden.body.error.details.permission).toBe("reviews:write")
    expect((await server.request("GET", `/import-jobs/${products.body.id}`, { token: readOnly.key })).status).toBe(404)
  })

  it(
    "bad requests: media type, type, CSV syntax, and more than 100,000 rows are refused and import nothing",
    async () => {
      const { key } = await server.provision()
      const json = await importFile(server, key, "type=products", "{}", "application/json")
      expect(json.status).toBe(415)
      expect(json.body.error.code).toBe("UNSUPPORTED_MEDIA_TYPE")
      const badType = await importFile(server, key, "type=orders", "{}\n", "application/x-ndjson")
      expect(badType.status).toBe(400)
      const badCsv = await importFile(server, key, "type=products", "slug,title\r\n\"a,A\r\nb,B\r\n", "text/csv")
      expect(badCsv.status, badCsv.text).toBe(400)
      expect(badCsv.body.error.details.issues[0].message).toMatch(/CSV/)
      const dupHeader = await importFile(server, key, "type=products", "slug,slug\r\na,b\r\n", "text/csv")
      expect(dupHeader.status).toBe(400)
      const tooMany = await importFile(
        server,
        key,
        "type=products",
        "{\"slug\":\"x\",\"title\":\"X\"}\n".repeat(100_001),
        "application/x-ndjson"
      )
      expect(tooMany.status).toBe(413)
      expect(tooMany.body.error.code).toBe("PAYLOAD_TOO_LARGE")
      expect(tooMany.body.error.message).toMatch(/100,000 rows/)
      // A job queued after the refusals, run to its end: the worker takes an organization's jobs oldest first, one
      // at a time, so a job a refused request had queued would have run before it.
      const after = await importFile(
        server,
        key,
        "type=products",
        "{\"slug\":\"after\",\"title\":\"A\"}\n",
        "application/x-ndjson"
      )
      expect(after.status, after.text).toBe(202)
      expect((await waitFor(server, key, `/import-jobs/${after.body.id}`)).status).toBe("succeeded")
      const products = (await server.request("GET", "/products", { token: key })).body.data
      expect(products.map((p: { slug: string }) => p.slug)).toEqual(["after"])
    },
    60_000
  )

  it("a JSON value nested thousands deep in a CSV cell or an NDJSON line is a 400 like in a request body, and imports nothing", async () => {
    const { key } = await server.provision()
    const deep = "[".repeat(20_000) + "]".repeat(20_000)
    const inCell = await importFile(
      server,
      key,
      "type=products",
      csv([["slug", "title", "metadata"], ["a", "A", "{}"], ["b", "B", deep]]),
      "text/csv"
    )
    expect(inCell.status, inCell.text).toBe(400)
    expect(inCell.body.error.details.issues[0]).toEqual({
      path: "body",
      message: expect.stringMatching(/^row 2, column "metadata", nests .* deeper than 64 levels/)
    })
    const inLine = await importFile(
      server,
      key,
      "type=products",
      `{"slug":"a","title":"A"}\n{"slug":"b","title":"B","metadata":${deep}}\n`,
      "application/x-ndjson"
    )
    expect(inLine.status, inLine.text).toBe(400)
    expect(inLine.body.error.details.issues[0].message).toMatch(/^row 2 nests .* deeper than 64 levels/)
    // Brackets in a text column are text, however many.
    const inText = await importFile(
      server,
      key,
      "type=products",
      csv([["slug", "title"], ["c", deep.slice(0, 200)]]),
      "text/csv"
    )
    expect(inText.status, inText.text).toBe(202)
    await waitFor(server, key, `/import-jobs/${inText.body.id}`)
    expect((await server.request("GET", "/products", { token: key })).body.data.map((p: any) => p.slug)).toEqual(["c"])
  })

  it("an export downloaded as CSV re-imports into a fresh organization as the same reviews", async () => {
    const { key } = await server.provision()
    await seedProducts(server, key)
    const rows = [
      {
        externalId: "e1",
        product: "mug",
        rating: 5,
        title: "Fine, \"quoted\"",
        body: "Two\nlines",
        customer: "ann@example.com",
        response: "Thanks",
        metadata: { a: "1" }
      },
      { externalId: "e2", product: "cup", rating: 3, pending: true },
      { externalId: "e3", product: "cup", rating: 1, published: false, imageUrls: ["https://img.example/b.jpg"] },
      // Spreadsheet formulas, and text that looks like an escaped one.
      {
        externalId: "=e4",
        product: "cup",
        rating: 2,
        title: "=HYPERLINK(\"https://evil.example\",\"x\")",
        body: "+1 -2",
        response: "@SUM(A1)",
        customer: "\tbob@example.com".trim()
      },
      { externalId: "e5", product: "mug", rating: 4, title: "-minus", body: "'=already escaped", response: "\tTabbed" }
    ]
    const imported = await importFile(
      server,
      key,
      "type=reviews",
      rows.map((r) => JSON.stringify(r)).join("\n"),
      "application/x-ndjson"
    )
    expect((await waitFor(server, key, `/import-jobs/${imported.body.id}`)).progress.importedRows).toBe(5)

    const exportJob = await server.request("POST", "/export-jobs", {
      token: key,
      body: { type: "reviews", format: "csv" }
    })
    expect(exportJob.status, exportJob.text).toBe(202)
    expect(exportJob.headers.get("x-rate-limit-cost")).toBe("10")
    const done = await waitFor(server, key, `/export-jobs/${exportJob.body.id}`)
    expect(done.status).toBe("succeeded")
    expect(done.progress.totalRows).toBe(5)
    const file = await server.request("GET", `/export-jobs/${exportJob.body.id}/download`, { token: key })
    expect(file.status).toBe(200)
    expect(file.headers.get("content-type")).toMatch(/^text\/csv/)
    // No cell starts with a character a spreadsheet would run as a formula (OWASP: a leading ').
    const cells = file.text.split("\r\n").slice(1).flatMap((line) => line.split(",")).map((c) =>
      c.startsWith("\"") ? c.slice(1) : c
    )
    expect(cells.filter((c) => /^[=+\-@\t\r]/.test(c))).toEqual([])
    expect(file.text).toContain("'=HYPERLINK(")
    expect(file.text).toContain("''=already escaped")

    const fresh = await server.provision()
    await seedProducts(server, fresh.key)
    const again = await importFile(server, fresh.key, "type=reviews&strict=true", file.text, "text/csv")
    expect(again.status, again.text).toBe(202)
    const reimported = await waitFor(server, fresh.key, `/import-jobs/${again.body.id}`)
    expect(reimported.status, JSON.stringify(reimported)).toBe("succeeded")
    const shape = async (k: string) => {
      const list = await server.request("GET", "/reviews?include=product,customer,response,files", { token: k })
      return list.body.data.map((r: any) => ({
        externalId: r.externalId,
        product: r.product.slug,
        customer: r.customer?.email ?? null,
        title: r.title,
        body: r.body,
        rating: r.rating,
        published: r.published,
        moderated: r.moderatedAt !== null,
        createdAt: r.createdAt,
        response: r.response?.body ?? null,
        files: r.files.map((f: any) => f.url),
        metadata: r.metadata
      })).sort((a: any, b: any) => a.externalId.localeCompare(b.externalId))
    }
    expect(await shape(fresh.key)).toEqual(await shape(key))

    const ndjson = await server.request("POST", "/export-jobs", {
      token: key,
      body: { type: "reviews", format: "ndjson", filter: { rating: { $gte: 3 } }, search: "quoted" }
    })
    await waitFor(server, key, `/export-jobs/${ndjson.body.id}`)
    const lines = (await server.request("GET", `/export-jobs/${ndjson.body.id}/download`, { token: key })).text.trim()
      .split("\n")
    expect(lines.map((l) => JSON.parse(l).externalId)).toEqual(["e1"])
    // Every field of the list, nulls included, and no formula escape in NDJSON.
    const e1 = JSON.parse(lines[0]!)
    expect(Object.keys(e1)).toEqual(Jobs.REVIEW_EXPORT_COLUMNS)
    expect(e1).toMatchObject({
      pending: null,
      imageUrls: null,
      answers: null,
      redactedAt: null,
      title: "Fine, \"quoted\""
    })
    const badFilter = await server.request("POST", "/export-jobs", {
      token: key,
      body: { type: "reviews", format: "csv", filter: { nope: 1 } }
    })
    expect(badFilter.status).toBe(400)
    const other = await server.provision()
    expect((await server.request("GET", `/export-jobs/${ndjson.body.id}/download`, { token: other.key })).status).toBe(
      404
    )
  })
})
