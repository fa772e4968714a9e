import type { Migration } from "../Migrations.ts"
import { rateLimitTableStatements } from "../PgRateLimitStore.ts"

export const rateLimitMigration: Migration = { id: 2, name: "rate_limits", statements: rateLimitTableStatements }
