/**
 * Vitest's global setup: after the run, drops the databases its tests made on the server of TEST_DATABASE_URL
 * (each test file makes fresh ones and would otherwise leave them behind), and only those of this run.
 */
import { dropRunDatabases, serverUrl } from "../packages/adapter-postgres/test/TestDatabase.ts"

export default function setup() {
  return async () => {
    if (serverUrl === undefined) return
    const dropped = await dropRunDatabases(serverUrl).catch((error: unknown) => {
      console.warn(`test databases: could not drop this run's databases (${String(error)})`)
      return 0
    })
    if (dropped > 0) console.log(`test databases: dropped this run's ${dropped} databases`)
  }
}
