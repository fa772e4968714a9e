import type { Migration } from "../kernel/Migrations.ts"
import { embeddedRateLimitSessionStatements } from "../ratelimit/PgEmbeddedRateLimitStore.ts"

export const embeddedRateLimitSessionsMigration: Migration = {
  id: 100,
  name: "rate_limit_embedded_sessions",
  statements: embeddedRateLimitSessionStatements
}
