import type { Migration } from "../kernel/Migrations.ts"
import { rateLimitSpendFunctionStatements } from "../ratelimit/PgRateLimitStore.ts"

export const rateLimitSpendMigration: Migration = {
  id: 60,
  name: "rate_limit_spend",
  statements: rateLimitSpendFunctionStatements
}
