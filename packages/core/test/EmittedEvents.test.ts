/**
 * `SERVICE_EVENT_NAMES` is what the sources record: every event name passed to an event recorder or written by a
 * store's SQL (`event: "…"`, `record(…, "…")`, `appendEvents(…, "…")`, a SQL literal `'name'`) is in it, and every name in
 * it is recorded somewhere. So `GET /webhook-events`' `emitted` cannot drift from the code.
 */
import { Webhooks } from "@feedback/core"
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import { expect, it } from "vitest"

const packagesDir = Path.resolve(import.meta.dirname, "../..")
const sources = ["core/src", "adapter-memory/src", "adapter-postgres/src"].flatMap((dir) =>
  readdirSync(Path.join(packagesDir, dir), { recursive: true })
    .map(String)
    .filter((f) =>
      f.endsWith(".ts") && !f.includes("Conformance") && !f.includes("testing") && !f.endsWith("EventCatalog.ts") &&
      !f.endsWith("HostEvents.ts")
    )
    .map((f) => readFileSync(Path.join(packagesDir, dir, f), "utf8"))
)

const catalog = new Set<string>(Webhooks.EVENT_NAMES)
const recorded = new Set(
  sources.flatMap((text) =>
    [...text.matchAll(
      /(?:record\([^,()]+,\s*|appendEvents\([^,()]+,\s*|insertReviewsSql\(|event:\s*)["'`]([a-zA-Z]+\.[a-zA-Z]+)["'`]|'([a-zA-Z]+\.(?:created|updated|deleted))'/g
    )]
      .map((m) => m[1] ?? m[2]!)
      .filter((name) => catalog.has(name))
  )
)

it("lists exactly the names the service's sources record", () => {
  expect([...recorded].sort()).toEqual([...Webhooks.SERVICE_EVENT_NAMES].sort())
})
