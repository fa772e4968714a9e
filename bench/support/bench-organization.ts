/**
 * The one organization the hot-path floors (`bare-server.ts`, `effect-floor-server.ts`) know, found by the SHA-256 of
 * its key `BENCH_KEY`: the same lookup work for both, so their difference is the framework's.
 */
import { createHash, randomUUID } from "node:crypto"

const organization = {
  id: randomUUID(),
  name: "Bench organization",
  plan: { apiRequestsPerMinute: 1_000_000 },
  createdAt: new Date().toISOString()
}

export const organizationByKeyHash = new Map([
  [createHash("sha256").update(process.env["BENCH_KEY"] ?? "").digest("hex"), organization]
])
