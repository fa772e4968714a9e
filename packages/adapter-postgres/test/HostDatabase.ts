/**
 * A host's own database as `docs/EMBEDDING.md` describes it, as SQL for its owner to run: the host's tables under the
 * names the store used to take, and a runtime role that may read and write rows but never change the schema.
 * Shared by `PgHostDatabase.test.ts` and `scripts/pack-check.ts` (which runs it with plain Node: no dependencies).
 */
import { randomBytes } from "node:crypto"

/** The host's own tables, in `public`, under the names the store used to take. */
export const hostTables: ReadonlyArray<string> = [
  "CREATE TABLE schema_migrations (version bigint PRIMARY KEY, dirty boolean NOT NULL)",
  "INSERT INTO schema_migrations VALUES (20240101000000, false)",
  "CREATE TABLE products (id serial PRIMARY KEY, sku text NOT NULL)",
  "INSERT INTO products (sku) VALUES ('HOST-1'), ('HOST-2')",
  "CREATE TABLE customers (id serial PRIMARY KEY, email_address text NOT NULL)",
  "INSERT INTO customers (email_address) VALUES ('host@example.com')"
]

/** A new login role's name (`<prefix>_<random>`) and password. */
export const dmlRole = (prefix: string) => ({
  role: `${prefix}_${randomBytes(5).toString("hex")}`,
  password: randomBytes(12).toString("hex")
})

/**
 * What a DBA runs for a runtime role, after the store is migrated into `schema`: the role, the host's own grant of
 * its tables, then the schema's use, rows of its tables and its sequences; nothing to create.
 */
export const dmlRoleStatements = (schema: string, { password, role }: { role: string; password: string }) => [
  `CREATE ROLE ${role} LOGIN PASSWORD '${password}'`,
  `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`,
  `GRANT USAGE ON SCHEMA ${schema} TO ${role}`,
  `GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`,
  `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role}`
]

/** `url` connecting as `role` instead. */
export const asRole = (url: string, { password, role }: { role: string; password: string }) => {
  const u = new URL(url)
  u.username = role
  u.password = password
  return u.toString()
}
