/** Every migration of the PostgreSQL store, in one list: adding a capability adds its file here. */
import type { Migration } from "../Migrations.ts"
import { organizationsMigration } from "./0001_organizations.ts"
import { rateLimitMigration } from "./0002_rate_limits.ts"
import { webhooksMigration } from "./0010_webhooks.ts"

export const migrations: ReadonlyArray<Migration> = [
  organizationsMigration,
  webhooksMigration,
  rateLimitMigration
]
