/**
 * `feedback-admin-api`: the operator's command line, built with `effect/cli`.
 *
 *   serve                      the standalone server (what `npm start` runs), configured from the environment
 *   migrate [--status]         apply pending migrations to DATABASE_URL / DATA_DIR, or list applied and pending
 *   org create --name          provision an organization through a running server's operator API
 *   key create|revoke          issue or revoke an organization's secret key the same way
 *   import-jobs watch <id>     a progress bar for an import job until it ends (export-jobs watch for exports)
 *
 * `org` and `key` talk to a server (`--url`, default `ADMIN_API_URL` or http://127.0.0.1:3000) with the
 * `OPERATOR_TOKEN` from the environment, never from argv (which other local users can read in the process list);
 * `import-jobs watch` reads the secret key from `ADMIN_API_KEY` the same way.
 */
import { migrationStatus, migrations, PgDatabase, runMigrations } from "@feedback/adapter-postgres"
import { OperatorClient, OperatorClientLayer } from "@feedback/client/effect"
import { Kernel } from "@feedback/core"
import { Config, Console, Effect, Option, Redacted } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { CliError } from "effect/cli"
import { serve } from "../main.ts"
import { chooseStore, describeStore } from "../server/StoreSelection.ts"
import { isFinished, progressLine, type WatchedJob } from "./JobProgress.ts"

const fail = (userMessage: string) =>
  Effect.fail(new CliError.UserError({ cause: new Error(userMessage), userMessage }))

/** Prints a result as indented JSON on stdout, for people and for `jq` alike. */
const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

// ---------------------------------------------------------------------------------------------------------------
// serve

const serveCommand = Command.make("serve", {}, () => serve).pipe(
  Command.withDescription(
    "Run the Admin API server. Configured from the environment (PORT, HOST, DATABASE_URL, DATA_DIR, OPERATOR_TOKEN, " +
      "CURSOR_SECRET, SMTP_URL, …; see the README's table). Without DATABASE_URL it runs on embedded PGlite in DATA_DIR."
  ),
  Command.withExamples([
    { command: "feedback-admin-api serve", description: "Serve on 127.0.0.1:3000 over embedded PGlite in ./.data" },
    {
      command: "DATABASE_URL=postgres://app@db/feedback PORT=8080 feedback-admin-api serve",
      description: "Serve over a PostgreSQL server"
    }
  ])
)

// ---------------------------------------------------------------------------------------------------------------
// migrate

const databaseTarget = Effect.gen(function*() {
  const databaseUrl = yield* Config.String("DATABASE_URL").pipe(Config.option)
  const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault("./.data"))
  const choice = chooseStore(Option.getOrUndefined(databaseUrl), dataDir)
  if (choice._tag === "Memory") return yield* fail("DATABASE_URL=memory has no schema to migrate")
  return { target: choice, description: describeStore(choice) }
})

const migrateCommand = Command.make("migrate", {
  status: Flag.Boolean("status").pipe(
    Flag.withDescription("List applied and pending migrations; change nothing"),
    Flag.withDefault(false)
  )
}, ({ status }) =>
  Effect.gen(function*() {
    const { target, description } = yield* databaseTarget
    const database = PgDatabase(target)
    if (status) {
      const { applied, pending } = yield* migrationStatus(migrations).pipe(Effect.provide(database))
      yield* Console.log(`Store: ${description}`)
      for (const m of applied) {
        yield* Console.log(`  applied  ${String(m.id).padStart(4, "0")}_${m.name}  ${m.appliedAt}`)
      }
      for (const m of pending) yield* Console.log(`  pending  ${String(m.id).padStart(4, "0")}_${m.name}`)
      yield* Console.log(`${applied.length} applied, ${pending.length} pending`)
      return
    }
    const ran = yield* runMigrations(migrations).pipe(Effect.provide(database))
    yield* Console.log(
      ran.length === 0 ? `Store: ${description}: up to date` : `Store: ${description}: applied ${ran.join(", ")}`
    )
  }).pipe(Effect.catchTag("SqlError", (e) => fail(`Database error: ${e.message}`)))).pipe(
    Command.withDescription(
      "Apply pending schema migrations to the store named by DATABASE_URL (or the embedded PGlite in DATA_DIR), in " +
        "the schema DATABASE_SCHEMA (default feedback). " +
        "Servers also migrate when they start; this runs it ahead of a deploy. Stop a server using the embedded store first."
    ),
    Command.withExamples([
      {
        command: "DATABASE_URL=postgres://app@db/feedback feedback-admin-api migrate --status",
        description: "What would run"
      }
    ])
  )

// ---------------------------------------------------------------------------------------------------------------
// org / key: through a running server's operator API

const url = Flag.String("url").pipe(
  Flag.withDescription("The server's origin (default: ADMIN_API_URL, else http://127.0.0.1:3000)"),
  Flag.optional
)

/** Runs `use` with the operator client for `--url` and `OPERATOR_TOKEN`, turning API errors into one-line messages. */
const withOperator = <A, E>(
  baseUrl: Option.Option<string>,
  use: (client: OperatorClient["Service"]) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const token = yield* Config.Redacted("OPERATOR_TOKEN").pipe(Config.option)
    if (Option.isNone(token)) return yield* fail("Set OPERATOR_TOKEN to the server's operator token")
    const fallback = yield* Config.String("ADMIN_API_URL").pipe(Config.withDefault("http://127.0.0.1:3000"))
    const origin = Option.getOrElse(baseUrl, () => fallback)
    return yield* OperatorClient.use(use).pipe(
      Effect.provide(OperatorClientLayer({ baseUrl: origin, operatorToken: Redacted.value(token.value) })),
      Effect.catch((error: unknown) =>
        fail(
          typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
            ? `${origin}: ${error.message}`
            : `${origin}: ${String(error)}`
        )
      )
    )
  })

const orgCreate = Command.make("create", {
  url,
  name: Flag.String("name").pipe(Flag.withDescription("The organization's name")),
  requestsPerMinute: Flag.Int("requests-per-minute").pipe(
    Flag.withDescription("The plan's API requests per minute (default: the server's default plan)"),
    Flag.optional
  )
}, ({ url, name, requestsPerMinute }) =>
  withOperator(url, (client) =>
    client.operator.createOrganization({
      payload: { name, ...(Option.isSome(requestsPerMinute) ? { apiRequestsPerMinute: requestsPerMinute.value } : {}) }
    })).pipe(Effect.flatMap(printJson))).pipe(
    Command.withDescription("Create an organization; prints it as JSON"),
    Command.withExamples([{
      command: "feedback-admin-api org create --name \"Acme shop\"",
      description: "A new tenant"
    }])
  )

const orgCommand = Command.make("org").pipe(
  Command.withDescription("Organizations (through a running server's operator API; needs OPERATOR_TOKEN)"),
  Command.withSubcommands([orgCreate])
)

const organization = Flag.String("org").pipe(Flag.withDescription("The organization's id"))

const keyCreate = Command.make("create", {
  url,
  organization,
  name: Flag.String("name").pipe(Flag.withDescription("A label for the key"), Flag.optional),
  permissions: Flag.String("permissions").pipe(
    Flag.withDescription(`Comma-separated permissions (default: all of ${Kernel.permissions.join(", ")})`),
    Flag.optional
  )
}, (input) =>
  Effect.gen(function*() {
    const requested = Option.match(input.permissions, {
      onNone: () => [...Kernel.permissions],
      onSome: (list) => list.split(",").map((p) => p.trim()).filter((p) => p !== "")
    })
    const unknown = requested.filter((p) => !(Kernel.permissions as ReadonlyArray<string>).includes(p))
    if (unknown.length > 0) {
      return yield* fail(`Unknown permission ${unknown.join(", ")}; known: ${Kernel.permissions.join(", ")}`)
    }
    const issued = yield* withOperator(input.url, (client) =>
      client.operator.issueKey({
        params: { id: input.organization as Kernel.OrganizationId },
        payload: {
          permissions: requested as Array<(typeof Kernel.permissions)[number]>,
          ...(Option.isSome(input.name) ? { name: input.name.value } : {})
        }
      }))
    yield* printJson(issued)
    yield* Console.error("The secret key is shown once: only its hash is stored.")
  })).pipe(Command.withDescription("Issue a secret key; prints it (the only time it is shown) as JSON"))

const keyRevoke = Command.make(
  "revoke",
  {
    url,
    organization,
    key: Flag.String("key").pipe(Flag.withDescription("The key's id (not the secret)"))
  },
  ({ url, organization, key }) =>
    withOperator(
      url,
      (client) =>
        client.operator.revokeKey({
          params: { id: organization as Kernel.OrganizationId, keyId: key as Kernel.SecretKeyId }
        })
    ).pipe(
      Effect.flatMap(printJson)
    )
).pipe(Command.withDescription("Revoke a secret key at once; prints the revoked key as JSON"))

const keyCommand = Command.make("key").pipe(
  Command.withDescription("Secret keys (through a running server's operator API; needs OPERATOR_TOKEN)"),
  Command.withSubcommands([keyCreate, keyRevoke])
)

// ---------------------------------------------------------------------------------------------------------------
// import-jobs / export-jobs watch: through a running server's admin API

const watchJob = (kind: "import-jobs" | "export-jobs") =>
  Command.make("watch", {
    url,
    id: Argument.String("id").pipe(Argument.withDescription("The job's id")),
    interval: Flag.Int("interval").pipe(
      Flag.withDescription("Milliseconds between polls (default 500)"),
      Flag.withDefault(500)
    )
  }, ({ id, interval, url }) =>
    Effect.gen(function*() {
      const key = yield* Config.Redacted("ADMIN_API_KEY").pipe(Config.option)
      if (Option.isNone(key)) return yield* fail("Set ADMIN_API_KEY to a secret key that may read the job")
      const fallback = yield* Config.String("ADMIN_API_URL").pipe(Config.withDefault("http://127.0.0.1:3000"))
      const origin = Option.getOrElse(url, () => fallback)
      const read = Effect.tryPromise({
        try: async () => {
          const res = await fetch(`${origin}/${kind}/${encodeURIComponent(id)}`, {
            headers: { authorization: `Bearer ${Redacted.value(key.value)}` }
          })
          const body = await res.json() as { readonly error?: { readonly message: string } }
          if (!res.ok) throw new Error(body.error?.message ?? `HTTP ${res.status}`)
          return body as WatchedJob & { readonly error: { readonly message: string } | null }
        },
        catch: (e) => e instanceof Error ? e.message : String(e)
      }).pipe(Effect.catch((message: string) => fail(`${origin}: ${message}`)))
      // On a terminal the bar redraws in place; piped, each change is its own line.
      const tty = process.stderr.isTTY === true
      let last = ""
      for (;;) {
        const job = yield* read
        const line = progressLine(job)
        if (line !== last) yield* Effect.sync(() => process.stderr.write(tty ? `\r${line}` : `${line}\n`))
        last = line
        if (isFinished(job)) {
          if (tty) yield* Effect.sync(() => process.stderr.write("\n"))
          yield* printJson(job)
          if (job.status === "failed") {
            return yield* fail(`Job ${id} failed: ${job.error?.message ?? "no reason given"}`)
          }
          return
        }
        yield* Effect.sleep(Math.max(50, interval))
      }
    })).pipe(
      Command.withDescription(
        `Show a progress bar for a job of ${kind} until it ends, then print it as JSON (exit code 1 if it failed). Needs ADMIN_API_KEY.`
      ),
      Command.withExamples([{
        command: `ADMIN_API_KEY=sk_… feedback-admin-api ${kind} watch 0190…`,
        description: "Follow a job"
      }])
    )

const importJobsCommand = Command.make("import-jobs").pipe(
  Command.withDescription("Import jobs (through a running server's admin API; needs ADMIN_API_KEY)"),
  Command.withSubcommands([watchJob("import-jobs")])
)

const exportJobsCommand = Command.make("export-jobs").pipe(
  Command.withDescription("Export jobs (through a running server's admin API; needs ADMIN_API_KEY)"),
  Command.withSubcommands([watchJob("export-jobs")])
)

export const cli = Command.make("feedback-admin-api").pipe(
  Command.withDescription(
    "The feedback platform's merchant Admin API: serve it, migrate its database, provision tenants, follow jobs"
  ),
  Command.withSubcommands([serveCommand, migrateCommand, orgCommand, keyCommand, importJobsCommand, exportJobsCommand])
)
