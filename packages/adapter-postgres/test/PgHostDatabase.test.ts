/**
 * The store in a host's own database (docs/EMBEDDING.md, docs/DECISIONS.md §58): beside the host's `schema_migrations`,
 * `products` and `customers`, migrated by a separate step, run by a role with only read/write rights through a
 * `PgClient` of the host's without the store's column naming; two schemas of one database apart from each other; an
 * earlier install's tables in `public` found and never shadowed by an empty schema.
 */
import { assert, it } from "@effect/vitest"
import { PgClient, PgConnection } from "@effect/sql-pg"
import { Kernel, Organizations } from "@feedback/core"
import { runStoreConformance } from "@feedback/testing"
import { Cause, Effect, Exit, Layer, Queue, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { PgHostStoreLayer, PgStoreLayer, PgStoreServices } from "../src/PgStore.ts"
import { migrateStore, migrateWithClient } from "../src/PgMigrate.ts"
import { PgHostDatabase } from "../src/kernel/PgDatabase.ts"
import { PgWorkSignals } from "../src/kernel/PgWorkSignals.ts"
import { migrations } from "../src/migrations/index.ts"
import { PgStoreTestKit } from "../src/testing/PgStoreTestKit.ts"
import { asRole, dmlRole, dmlRoleStatements, hostTables } from "./HostDatabase.ts"
import { describeWithServer, dropServerDatabase, freshServerDatabase, serverUrl } from "./TestDatabase.ts"

/** SQL as the database's owner, on a connection of its own (the host's tooling, a DBA). */
const asOwner = (url: string, statements: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const results: Array<ReadonlyArray<Record<string, any>>> = []
    for (const statement of statements) results.push(yield* sql.unsafe<Record<string, any>>(statement))
    return results
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.orDie)

/**
 * A fresh database holding the host's tables, the store migrated into `feedback` by the owner, and a new login role
 * with only the runtime grants; dropped (role too) with the scope.
 */
const hostDatabase = (server: string) =>
  Effect.acquireRelease(
    Effect.gen(function*() {
      const url = yield* freshServerDatabase(server)
      const role = dmlRole("feedback_dml")
      yield* asOwner(url, hostTables)
      yield* migrateStore({ _tag: "Server", url, schema: "feedback", maxConnections: 1 }).pipe(Effect.orDie)
      yield* asOwner(url, dmlRoleStatements("feedback", role))
      return { url, role: role.role, appUrl: asRole(url, role) }
    }),
    ({ role, url }) =>
      Effect.promise(() => dropServerDatabase(server, url)).pipe(
        Effect.andThen(asOwner(server, [`DROP ROLE IF EXISTS ${role}`])),
        Effect.ignore
      )
  )

/** The host's client: its own pool, no column naming, its own `search_path`. */
const hostClient = (url: string) => PgClient.layer({ url: Redacted.make(url), maxConnections: 2 })

describeWithServer("the store in a host's database", (server) => {
  it.effect(
    "works beside the host's own schema_migrations, products and customers, as a DML-only role",
    () =>
      Effect.gen(function*() {
        const { appUrl, url } = yield* hostDatabase(server)
        const store = Organizations.Organizations.layer.pipe(
          Layer.provideMerge(PgHostStoreLayer({ migrate: false })),
          Layer.provideMerge(Kernel.IdGenerator.uuidV7),
          Layer.provideMerge(hostClient(appUrl))
        )
        yield* Effect.gen(function*() {
          const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Beside the shop" }))
          assert.strictEqual(
            (yield* Organizations.Organizations.use((o) => o.findOrganization(org.id))).name,
            "Beside the shop"
          )
          // The host's client is still the host's: its naming (none) and its search_path (its own tables).
          const host = yield* SqlClient.SqlClient
          const rows = yield* host<{ email_address: string }>`SELECT email_address FROM customers`
          assert.deepStrictEqual(rows, [{ email_address: "host@example.com" }])
          // The role cannot change the schema: the store ran without DDL.
          const ddl = yield* host.unsafe("CREATE TABLE feedback.intruder (id int)").pipe(Effect.exit)
          assert.isTrue(Exit.isFailure(ddl))
        }).pipe(Effect.provide(store), Effect.scoped)
        const [version, products, customers, publicTables] = yield* asOwner(url, [
          "SELECT version::text FROM public.schema_migrations",
          "SELECT sku FROM public.products ORDER BY id",
          "SELECT count(*)::int AS n FROM public.customers",
          "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        ])
        assert.deepStrictEqual(version, [{ version: "20240101000000" }])
        assert.deepStrictEqual(products, [{ sku: "HOST-1" }, { sku: "HOST-2" }])
        assert.deepStrictEqual(customers, [{ n: 1 }])
        assert.deepStrictEqual(publicTables!.map((r) => r.tablename), ["customers", "products", "schema_migrations"])
      }).pipe(Effect.scoped),
    120_000
  )

  it.effect(
    "refuses to start with migrate: false while migrations are pending, naming the step",
    () =>
      Effect.gen(function*() {
        const url = yield* freshServerDatabase(server)
        const exit = yield* Layer.build(PgStoreLayer({ _tag: "Server", url, schema: "late" }, { migrate: false })).pipe(
          Effect.scoped,
          Effect.exit
        )
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) assert.include(Cause.pretty(exit.cause), "run the migration step first")
        // The migration entry point over a host's client, then the same layer starts.
        const ran = yield* migrateWithClient({ schema: "late" }).pipe(
          Effect.provide(hostClient(url)),
          Effect.scoped,
          Effect.orDie
        )
        assert.strictEqual(ran.length, migrations.length)
        yield* Layer.build(PgStoreLayer({ _tag: "Server", url, schema: "late" }, { migrate: false })).pipe(
          Effect.scoped
        )
        yield* Effect.promise(() => dropServerDatabase(server, url))
      }),
    120_000
  )

  it.effect(
    "two schemas of one database: separate records, separate notification channels",
    () =>
      Effect.gen(function*() {
        const url = yield* freshServerDatabase(server)
        const storeIn = (schema: string) =>
          Layer.build(
            Organizations.Organizations.layer.pipe(
              Layer.provideMerge(PgStoreLayer({ _tag: "Server", url, schema, maxConnections: 2, workSignals: "poll" })),
              Layer.provideMerge(Kernel.IdGenerator.uuidV7)
            )
          )
        const a = yield* storeIn("shop_a")
        const b = yield* storeIn("shop_b")
        const inA = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "In A" })).pipe(
          Effect.provide(a)
        )
        const found = yield* Organizations.Organizations.use((o) => o.findOrganization(inA.id)).pipe(
          Effect.provide(b),
          Effect.exit
        )
        assert.isTrue(Exit.isFailure(found), "schema b sees schema a's organization")
        // Each schema's triggers signal its own channel: every notification goes through the schema's channel function.
        const [channels, literal] = yield* asOwner(url, [
          "SELECT shop_a.feedback_work_channel() AS a, shop_b.feedback_work_channel() AS b",
          `SELECT count(*)::int AS n FROM pg_proc WHERE pronamespace IN ('shop_a'::regnamespace, 'shop_b'::regnamespace)
          AND prosrc LIKE '%pg_notify(''%'`
        ])
        assert.deepStrictEqual(channels, [{ a: "shop_a_work", b: "shop_b_work" }])
        assert.deepStrictEqual(literal, [{ n: 0 }])
        const connectionFor = (channel: string) =>
          Effect.flatMap(PgConnection.make({ url: Redacted.make(url) }), (c) => c.listen(channel))
        const onA = yield* connectionFor("shop_a_work")
        const onB = yield* connectionFor("shop_b_work")
        const touch = (schema: string) => asOwner(url, [`UPDATE ${schema}.organizations SET name = name WHERE false`])
        yield* touch("shop_b")
        assert.strictEqual((yield* Queue.take(onB)).payload, "credentials")
        yield* touch("shop_a")
        assert.strictEqual((yield* Queue.take(onA)).payload, "credentials")
        yield* Effect.promise(() => dropServerDatabase(server, url))
      }).pipe(Effect.scoped),
    120_000
  )

  it.effect(
    "an earlier install's tables in public: found, kept there or moved, never shadowed",
    () =>
      Effect.gen(function*() {
        const url = yield* freshServerDatabase(server)
        // The earlier layout: every table in public, recorded in public.schema_migrations.
        yield* migrateStore({ _tag: "Server", url, schema: "public", maxConnections: 1 }).pipe(Effect.orDie)
        yield* asOwner(url, ["ALTER TABLE public.feedback_migrations RENAME TO schema_migrations"])
        const earlier = yield* Organizations.Organizations.use((o) => o.createOrganization({ name: "Earlier" })).pipe(
          Effect.provide(
            Organizations.Organizations.layer.pipe(
              Layer.provideMerge(PgStoreLayer({ _tag: "Server", url, schema: "public", workSignals: "poll" })),
              Layer.provideMerge(Kernel.IdGenerator.uuidV7)
            )
          ),
          Effect.scoped
        )
        yield* asOwner(url, ["ALTER TABLE public.feedback_migrations RENAME TO schema_migrations"])
        const storeIn = (schema: string | undefined) =>
          Organizations.Organizations.layer.pipe(
            Layer.provideMerge(PgStoreLayer({ _tag: "Server", url, schema, workSignals: "poll" })),
            Layer.provideMerge(Kernel.IdGenerator.uuidV7)
          )
        // The default schema would be a new, empty store: refused, naming both ways out.
        const refused = yield* Layer.build(storeIn("feedback")).pipe(Effect.scoped, Effect.exit)
        assert.isTrue(Exit.isFailure(refused))
        if (Exit.isFailure(refused)) {
          assert.include(Cause.pretty(refused.cause), "ALTER SCHEMA public RENAME TO feedback")
        }
        // The documented move, then the default schema is the earlier store, its records and its migrations.
        yield* asOwner(url, ["ALTER SCHEMA public RENAME TO feedback", "CREATE SCHEMA public"])
        const moved = yield* Organizations.Organizations.use((o) => o.findOrganization(earlier.id)).pipe(
          Effect.provide(storeIn("feedback")),
          Effect.scoped
        )
        assert.strictEqual(moved.name, "Earlier")
        const [tables] = yield* asOwner(url, [
          "SELECT tablename FROM pg_tables WHERE tablename LIKE '%migrations' ORDER BY schemaname, tablename"
        ])
        assert.deepStrictEqual(tables!.map((r) => r.tablename), ["feedback_migrations"])
        yield* Effect.promise(() => dropServerDatabase(server, url))
      }),
    120_000
  )
})

// The whole conformance suite through a host's client without the store's naming, as a DML-only role.
if (serverUrl !== undefined) {
  const server = serverUrl
  runStoreConformance(
    "postgres server: a host's PgClient, a DML-only role, migrate: false",
    Layer.unwrap(Effect.map(hostDatabase(server), ({ appUrl }) =>
      PgStoreTestKit.pipe(
        Layer.provideMerge(Layer.merge(PgStoreServices({ migrate: false }), PgWorkSignals())),
        Layer.provide(PgHostDatabase({ maxConnections: 4 })),
        Layer.provide(hostClient(appUrl))
      ))).pipe((l) => l as never)
  )
}
