/** Every migration of the PostgreSQL store, in one list: adding a capability adds its file here. */
import type { Migration } from "../Migrations.ts"
import { organizationsMigration } from "./0001_organizations.ts"
import { rateLimitMigration } from "./0002_rate_limits.ts"
import { rateLimitSpendMigration } from "./0003_rate_limit_spend.ts"

export const migrations: ReadonlyArray<Migration> = [
  organizationsMigration,
  rateLimitMigration,
  rateLimitSpendMigration
]
