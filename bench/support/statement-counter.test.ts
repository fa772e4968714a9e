/**
 * `bench idle`'s measure (`statement-counter.ts`): the proxy counts each statement a client sends, by the simple and
 * the extended protocol (a prepared statement executed again counts again), and captures their texts and parameters.
 * Runs against the PostgreSQL server of TEST_DATABASE_URL (skipped without one).
 */
import pg from "pg"
import { describe, expect, it } from "vitest"
import { statementCounter } from "./statement-counter.ts"

const server = process.env["TEST_DATABASE_URL"]

describe.skipIf(server === undefined)("statement counter", () => {
  it("counts simple queries and executes, on every connection, with their texts and parameters", async () => {
    const captured: Array<readonly [string, ReadonlyArray<string | null>]> = []
    const counter = await statementCounter(server!, (text, parameters) => captured.push([text, parameters]))
    const a = new pg.Client({ connectionString: counter.url })
    const b = new pg.Client({ connectionString: counter.url })
    try {
      await a.connect()
      await b.connect()
      const before = counter.count()
      await a.query("SELECT 1")
      const prepared = { name: "twice", text: "SELECT $1::text AS x", values: ["it's"] }
      await b.query(prepared)
      await b.query({ ...prepared, values: [null] })
      expect(counter.count() - before).toBe(3)
      expect(counter.texts().get("SELECT $1::text AS x")).toBe(2)
      expect(captured.slice(-2)).toEqual([["SELECT $1::text AS x", ["it's"]], ["SELECT $1::text AS x", [null]]])
    } finally {
      await a.end()
      await b.end()
      await counter.close()
    }
  })
})
