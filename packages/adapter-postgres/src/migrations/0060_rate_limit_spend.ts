import type { Migration } from "../Migrations.ts"
import { rateLimitSpendFunctionStatements } from "../PgRateLimitStore.ts"

export const rateLimitSpendMigration: Migration = { id: 60, name: "rate_limit_spend", statements: rateLimitSpendFunctionStatements }
