/**
 * The distribution rule over the migrated schema (docs/OPERATIONS.md, "Scaling out"): every primary key, unique
 * constraint or index and foreign key of a tenant table starts with `organization_id`, so each table can be sharded
 * by organization (Citus distributed tables) with every key and join kept within one shard. The tables that cannot
 * follow it are listed here, with how each is distributed, and the list is the documentation's: a new table or key
 * that breaks the rule fails this test until it follows the rule or is listed (and documented) with its reason.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { readFileSync } from "node:fs"
import { PgStoreLayer } from "../src/PgStore.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

/**
 * What may break the rule, by table (every key of it) or by `table.key` (that key only): `local` tables stay on the
 * coordinator (instance bookkeeping), `reference` tables are copied to every node. docs/OPERATIONS.md lists each.
 */
const exceptions: Readonly<Record<string, "local" | "reference">> = {
  feedback_migrations: "local",
  instance_secrets: "local",
  rate_limit_embedded_sessions: "local",
  webhook_dispatchers: "reference",
  // Looked up by what a request presents, before its organization is known.
  "secret_keys.secret_keys_key_hash_unique": "reference",
  "publishable_keys.publishable_keys_by_key": "reference",
  "unsubscribe_tokens.unsubscribe_tokens_token": "reference",
  // A host maps its tenant to an organization before any organization is known.
  "organizations.organizations_external_id_key": "reference"
}

/** The "Scaling out" section of docs/OPERATIONS.md. */
const documented = () => {
  const text = readFileSync(new URL("../../../docs/OPERATIONS.md", import.meta.url), "utf8")
  const at = text.indexOf("## Scaling out")
  const end = text.indexOf("\n## ", at + 1)
  return at === -1 ? "" : text.slice(at, end === -1 ? undefined : end)
}

interface Key {
  readonly table: string
  readonly name: string
  readonly kind: string
  readonly columns: ReadonlyArray<string>
  readonly references: string | null
}

const services = freshLayer((target) => PgStoreLayer(target))

layer(services, { timeout: 120_000, excludeTestServices: true })(`the distribution rule (${storeName})`, (it) => {
  it.effect("every key, unique index and foreign key of a tenant table starts with organization_id", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const keys = yield* sql<Key>`
        SELECT c.conrelid::regclass::text AS table, c.conname AS name,
          CASE c.contype WHEN 'p' THEN 'primary key' WHEN 'u' THEN 'unique' ELSE 'foreign key' END AS kind,
          ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(attnum, ord)
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum ORDER BY k.ord) AS columns,
          CASE WHEN c.contype = 'f' THEN c.confrelid::regclass::text END AS references
        FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
        WHERE n.nspname = current_schema() AND c.contype IN ('p', 'u', 'f')
        UNION ALL
        SELECT i.indrelid::regclass::text, i.indexrelid::regclass::text, 'unique index',
          ARRAY(SELECT coalesce(a.attname::text, '(expression)') FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
            LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum ORDER BY k.ord),
          NULL
        FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = current_schema() AND i.indisunique
          AND NOT EXISTS (SELECT 1 FROM pg_constraint x WHERE x.conindid = i.indexrelid)
        ORDER BY 1, 2`
      assert.isAbove(keys.length, 20)
      assert.isTrue(keys.some((key) => key.kind === "foreign key" && key.references === "organizations"))
      const excepted = (key: Key) =>
        exceptions[key.table] !== undefined || exceptions[`${key.table}.${key.name}`] !== undefined
      const broken = keys
        .filter((key) => !excepted(key) && key.columns[0] !== "organization_id")
        .map((key) => `${key.table}.${key.name} (${key.kind}: ${key.columns.join(", ")})`)
      assert.deepStrictEqual(broken, [], "keys that do not start with organization_id")
      // Every exception still exists (a stale one would hide nothing, but says something false), and is documented.
      const present = new Set(keys.flatMap((key) => [key.table, `${key.table}.${key.name}`]))
      assert.deepStrictEqual(Object.keys(exceptions).filter((name) => !present.has(name)), [], "stale exceptions")
      const section = documented()
      const undocumented = Object.entries(exceptions)
        .filter(([name, kind]) => !section.includes(`\`${name.split(".")[0]}\``) || !section.includes(kind))
        .map(([name]) => name)
      assert.deepStrictEqual(undocumented, [], "exceptions missing from docs/OPERATIONS.md's Scaling out")
    }).pipe(Effect.orDie))
})
