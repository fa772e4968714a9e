import type { Migration } from "../kernel/Migrations.ts"
import { rateLimitTableStatements } from "../ratelimit/PgRateLimitStore.ts"

export const rateLimitMigration: Migration = { id: 2, name: "rate_limits", statements: rateLimitTableStatements }
