/**
 * Proof that the packages work outside this repository, as a host application installs them: builds and packs every
 * package, checks what each declares (a `default` export condition on every entry point, no `vitest` peer outside
 * the test kit), installs the tarballs into scratch projects outside the workspace, and there, with plain Node and
 * no type stripping, on Node 24 (this process) and on Node 22 (the `node@22` package, installed into the scratch
 * directory):
 *   (a) imports every entry point of every package (both Nodes),
 *   (b) runs an embedding host (node:http + makeNodeHandler) over the memory store and calls it (both Nodes),
 *   (c) Express (an app-wide express.json() before the mount), Fastify and Hono apps serving the API through the
 *       shipped mounts, a host session mapped by `authenticate` to a dashboard user who is never rate limited while
 *       the organization's key runs out of its bucket (both Nodes),
 *   (d) type-checks a TypeScript host with strict, noUnusedLocals and skipLibCheck: false,
 *   (e) starts `feedback-admin-api serve` from node_modules/.bin and calls it,
 *   (f) installs the client alone into a second project: under 20 MB, no PGlite, pg or nodemailer, and its fetch
 *       client calls the running server,
 *   (g) a memory-only host in CommonJS (both Nodes): only the HTTP adapter, the memory store and `effect` installed
 *       (no optional peer: no PGlite, Redis, nodemailer, csv-parse, @effect/platform-node or @effect/sql-pg), its
 *       node_modules at most `effect` plus 15 MiB, `require()` of every entry point it has and the API called through
 *       the fetch handler; with the lowest and the highest `effect` the packages' peer range allows (from the
 *       registry),
 *   (h) a host whose database already has its own `schema_migrations`, `products` and `customers` (on the server of
 *       TEST_DATABASE_URL; required under CI): `feedback-pg-migrate` with the owner's rights, then the API embedded
 *       over the host's own PgClient as a role with only read/write rights (`migrate: false`), an in-process consumer
 *       of `committedEvents` receiving the `review.created` of an imported review, the host's tables unchanged,
 *   (i) a host's property test written against `@feedback/testing` (its arbitraries, TestCoreLayer, callers) over
 *       the memory store, run by the host's own vitest.
 *
 *   npm run pack-check            (also run by `npm test`, through scripts/pack-check.test.ts)
 *
 * Prints one line per step and exits non-zero on the first failure.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { randomBytes } from "node:crypto"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import pg from "pg"
import { asRole, dmlRole, dmlRoleStatements, hostTables } from "../packages/adapter-postgres/test/HostDatabase.ts"

const root = Path.resolve(import.meta.dirname, "..")
const packages = [
  "core",
  "testing",
  "client",
  "adapter-memory",
  "adapter-postgres",
  "adapter-redis",
  "widget",
  "adapter-http"
] as const
const CLIENT_ONLY_LIMIT_BYTES = 20 * 1024 * 1024
/** A memory-only host's node_modules may hold at most this beside `effect` itself. */
const MEMORY_HOST_EXTRA_BYTES = 15 * 1024 * 1024
/** The Node major below the workspace's own (24) on which the packages must run too. */
const OLDER_NODE = "22"
const fixtures = Path.join(import.meta.dirname, "pack-check")

const startedAt = Date.now()
const step = (name: string) => console.log(`pack-check: ${name} (at ${Math.round((Date.now() - startedAt) / 1000)} s)`)
// npm scripts set NODE_OPTIONS with the workspace's source condition; a host outside the workspace has no such thing.
const hostEnv = (extra: Record<string, string> = {}) => {
  const env: Record<string, string> = { ...(process.env as Record<string, string>), ...extra }
  delete env["NODE_OPTIONS"]
  delete env["npm_config_node_options"]
  return env
}
const run = (cmd: string, args: ReadonlyArray<string>, cwd: string, env = hostEnv()) =>
  execFileSync(cmd, args, {
    cwd,
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    maxBuffer: 64 * 1024 * 1024
  })
const npm = (args: ReadonlyArray<string>, cwd: string) =>
  run(process.platform === "win32" ? "npm.cmd" : "npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], cwd)
const node = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}, bin = process.execPath) =>
  run(bin, args, cwd, hostEnv(env))
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MiB`

const sizeOf = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((total, entry) => {
    const path = Path.join(dir, entry.name)
    return total + (entry.isDirectory() ? sizeOf(path) : entry.isFile() ? statSync(path).size : 0)
  }, 0)

/** Every optional peer of the packages: what a host installs only for the feature it uses. */
const optionalPeers = [
  "@effect/platform-node",
  "@effect/sql-pg",
  "@electric-sql/pglite",
  "@electric-sql/pglite-socket",
  "csv-parse",
  "nodemailer"
]

interface Manifest {
  readonly name: string
  readonly exports: Record<string, string | Record<string, string>>
  readonly peerDependencies?: Record<string, string>
}
const readManifest = (p: string): Manifest =>
  JSON.parse(readFileSync(Path.join(root, "packages", p, "package.json"), "utf8")) as Manifest

/**
 * What a packed manifest must say: every entry point has a `default` condition (so `require()` resolves it; the
 * files are ESM without top-level await, which Node 22.12+ loads through require), and only the test kit has a
 * `vitest` peer, so a host on another vitest installs every other package.
 */
const checkManifest = (p: string, manifest: Manifest) => {
  for (const [entry, target] of Object.entries(manifest.exports)) {
    if (typeof target !== "string" && target["default"] === undefined) {
      throw new Error(`${manifest.name} exports ${entry} without a default condition: require() cannot resolve it`)
    }
  }
  if (p !== "testing" && manifest.peerDependencies?.["vitest"] !== undefined) {
    throw new Error(`${manifest.name} has a vitest peer`)
  }
}

/** The lowest and the highest published `effect` inside `range` (one version when they are the same). */
const effectBounds = (range: string, cwd: string): ReadonlyArray<string> => {
  const answer = JSON.parse(npm(["view", `effect@${range}`, "version", "--json"], cwd)) as string | Array<string>
  const numbers = (v: string) => v.split(".").map(Number)
  const versions = (typeof answer === "string" ? [answer] : answer).filter((v) => !v.includes("-")).sort((a, b) =>
    numbers(a).reduce((order, n, i) => order !== 0 ? order : n - numbers(b)[i]!, 0)
  )
  if (versions.length === 0) throw new Error(`no published effect matches ${range}`)
  return [...new Set([versions[0]!, versions[versions.length - 1]!])]
}

/** Installs `node@<OLDER_NODE>` (the npm package that downloads its binary) into `dir`; answers the binary. */
const installNode = (dir: string): string => {
  mkdirSync(dir)
  writeFileSync(
    Path.join(dir, "package.json"),
    JSON.stringify({ name: "older-node", private: true, allowScripts: { node: true } })
  )
  npm(["install", "--prefer-offline", `node@${OLDER_NODE}`], dir)
  const bin = Path.join(dir, "node_modules/.bin/node")
  const version = run(bin, ["--version"], dir).trim()
  if (!version.startsWith(`v${OLDER_NODE}.`)) throw new Error(`node@${OLDER_NODE} installed ${version}`)
  return bin
}

/** SQL with the server URL's (owner's) rights, one statement after another; answers each one's rows. */
const ownerSql = async (url: string, statements: ReadonlyArray<string>) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const results: Array<ReadonlyArray<Record<string, unknown>>> = []
    for (const statement of statements) results.push((await client.query(statement)).rows)
    return results
  } finally {
    await client.end()
  }
}

const withDatabase = (url: string, database: string) => {
  const u = new URL(url)
  u.pathname = `/${database}`
  return u.toString()
}

const topLevel = (path: string) => path.split("/").slice(0, path.startsWith("@") ? 2 : 1).join("/")

/** Starts the installed bin's `serve` on a free port and resolves its URL. */
const startBin = (cwd: string): Promise<{ url: string; child: ChildProcess }> =>
  new Promise((resolve, reject) => {
    const child = spawn(Path.join(cwd, "node_modules/.bin/feedback-admin-api"), ["serve"], {
      cwd,
      env: hostEnv({
        DATABASE_URL: "memory",
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_REQUESTS: "false",
        DEMO: "true",
        OPERATOR_TOKEN: "pack-check-operator-token-0123456789"
      }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let out = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`feedback-admin-api serve did not start:\n${out}`))
    }, 60_000)
    const onData = (chunk: Buffer) => {
      out += chunk.toString()
      const url = /listening on (http:\/\/[^\s"]+)/.exec(out)?.[1]
      const key = /Demo key \(shown once; keep it\): (sk_[A-Za-z0-9_-]+)/.exec(out)?.[1]
      if (url !== undefined && key !== undefined) {
        clearTimeout(timer)
        resolve({ url: `${url}#${key}`, child })
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`feedback-admin-api serve exited with ${code}:\n${out}`))
    })
  })

const main = async () => {
  const work = mkdtempSync(Path.join(tmpdir(), "feedback-pack-check-"))
  const keep = process.env["PACK_CHECK_KEEP"] === "1"
  let server: ChildProcess | undefined
  const cleanups: Array<() => Promise<unknown>> = []
  try {
    step("build")
    npm(["run", "build"], root)

    step("pack")
    const tarballs = Path.join(work, "tarballs")
    mkdirSync(tarballs)
    npm([
      "pack",
      "--ignore-scripts",
      "--pack-destination",
      tarballs,
      ...packages.flatMap((p) => ["-w", `packages/${p}`])
    ], root)
    const files = Object.fromEntries(packages.map((p) => {
      const file = readdirSync(tarballs).find((f) => f.startsWith(`feedback-${p}-`))
      if (file === undefined) throw new Error(`no tarball for ${p}`)
      return [p, Path.join(tarballs, file)]
    })) as Record<(typeof packages)[number], string>
    for (const [p, file] of Object.entries(files)) {
      const listing = run("tar", ["-tzf", file], work)
      const shipped = listing.split("\n").filter((f) => /\.test\.ts$|\/test\//.test(f))
      if (shipped.length > 0) throw new Error(`${p} ships test files: ${shipped.join(", ")}`)
      // The widget ships its browser bundle, which the server reads; every other package a built library.
      if (p === "widget") {
        if (!listing.includes("package/bundle/embed.js")) throw new Error("widget ships no bundle/embed.js")
      } else if (!listing.includes("package/dist/index.js") || !listing.includes("package/dist/index.d.ts")) {
        throw new Error(`${p} ships no dist/index.js + .d.ts`)
      }
      checkManifest(p, JSON.parse(run("tar", ["-xzOf", file, "package/package.json"], work)) as Manifest)
    }

    step(`Node ${OLDER_NODE} for the older-Node runs`)
    const olderNode = installNode(Path.join(work, `node${OLDER_NODE}`))

    step("install every package into a scratch host project")
    const host = Path.join(work, "host")
    cpSync(Path.join(fixtures, "host"), host, { recursive: true })
    // The test kit's peers (`@feedback/testing`'s), so that the test entry points import too; typescript for step (c).
    const devVersion = (name: string) =>
      JSON.parse(readFileSync(Path.join(root, "node_modules", name, "package.json"), "utf8")).version as string
    npm([
      "install",
      "--prefer-offline",
      ...Object.values(files),
      // Every optional peer, for the stores, mail and CSV the steps below use, and the frameworks step (c) mounts in.
      ...optionalPeers.map((name) => `${name}@${devVersion(name)}`),
      ...["express", "fastify", "hono"].map((name) => `${name}@${devVersion(name)}`),
      `vitest@${devVersion("vitest")}`,
      `@effect/vitest@${devVersion("@effect/vitest")}`,
      `fast-check@${devVersion("fast-check")}`,
      `typescript@${devVersion("typescript")}`,
      `@types/node@${devVersion("@types/node")}`
    ], host)

    for (const bin of [process.execPath, olderNode]) {
      const version = node(["--version"], host, {}, bin).trim()
      step(`(a) import every entry point with plain node ${version}`)
      console.log(node(["imports.mjs"], host, {}, bin).trim())

      step(`(b) an embedding host over the memory store, node ${version}`)
      console.log(node(["embed.mjs"], host, {}, bin).trim())

      step(
        `(c) Express, Fastify and Hono through the shipped mounts, a host-authenticated dashboard user, node ${version}`
      )
      console.log(node(["frameworks.mjs"], host, {}, bin).trim())
    }

    step("(d) type-check a TypeScript host (strict, noUnusedLocals, skipLibCheck: false)")
    node([Path.join(host, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], host)

    step("(e) feedback-admin-api --help, then serve")
    if (!node([Path.join(host, "node_modules/.bin/feedback-admin-api"), "--help"], host).includes("migrate")) {
      throw new Error("--help does not list migrate")
    }
    const started = await startBin(host)
    server = started.child
    const [url, key] = started.url.split("#") as [string, string]
    const health = await fetch(`${url}/health`)
    if (health.status !== 200) throw new Error(`GET /health answered ${health.status}`)
    // The widget bundle comes from the installed @feedback/widget.
    const embed = await fetch(`${url}/storefront/embed.js`)
    if (embed.status !== 200 || !(await embed.text()).includes("feedback-widget")) {
      throw new Error(`GET /storefront/embed.js answered ${embed.status} without the widget`)
    }

    step("(f) the client alone")
    const clientOnly = Path.join(work, "client-only")
    cpSync(Path.join(fixtures, "client-only"), clientOnly, { recursive: true })
    npm(["install", "--prefer-offline", files.client], clientOnly)
    const installed = readdirSync(Path.join(clientOnly, "node_modules"), { recursive: true }).map(String)
    const forbidden = installed.filter((f) => /^(@electric-sql|pg|nodemailer|effect)(\/|$)/.test(f))
    if (forbidden.length > 0) {
      throw new Error(
        `a client-only install contains ${[...new Set(forbidden.map((f) => f.split("/")[0]))].join(", ")}`
      )
    }
    const bytes = sizeOf(Path.join(clientOnly, "node_modules"))
    if (bytes > CLIENT_ONLY_LIMIT_BYTES) throw new Error(`a client-only install is ${(bytes / 1e6).toFixed(1)} MB`)
    console.log(
      `client-only node_modules: ${(bytes / 1024 / 1024).toFixed(2)} MiB; ${
        readdirSync(Path.join(clientOnly, "node_modules")).filter((d) => !d.startsWith(".")).join(", ")
      }`
    )
    console.log(node(["call.mjs"], clientOnly, { ADMIN_API_URL: url, ADMIN_API_KEY: key }).trim())

    const memoryHost = Path.join(work, "memory-host")
    cpSync(Path.join(fixtures, "memory-host"), memoryHost, { recursive: true })
    const effectRange = readManifest("core").peerDependencies?.["effect"]
    if (effectRange === undefined) throw new Error("@feedback/core declares no effect peer")
    for (const effect of effectBounds(effectRange, root)) {
      step(`(g) a memory-only CommonJS host, effect ${effect} (${effectRange})`)
      npm([
        "install",
        "--prefer-offline",
        files.core,
        files.client,
        files["adapter-memory"],
        files["adapter-http"],
        files.widget,
        `effect@${effect}`
      ], memoryHost)
      const modules = Path.join(memoryHost, "node_modules")
      const present = readdirSync(modules, { recursive: true }).map(String)
      const unwanted = present.filter((f) =>
        /(^|\/node_modules\/)(@electric-sql|redis|@redis|nodemailer|csv-parse|pg|@effect\/(platform-node|sql-pg)|vitest)(\/|$)/
          .test(f)
      )
      if (unwanted.length > 0) {
        throw new Error(`a memory-only install contains ${[...new Set(unwanted.map(topLevel))].join(", ")}`)
      }
      const extra = sizeOf(modules) - sizeOf(Path.join(modules, "effect"))
      console.log(
        `memory-only node_modules: effect + ${mib(extra)} (limit ${mib(MEMORY_HOST_EXTRA_BYTES)}); ${
          [...new Set(present.filter((f) => !f.includes("/node_modules/")).map(topLevel))].filter((d) =>
            !d.startsWith(".") && d !== "effect" && !(d.startsWith("@") && !d.includes("/"))
          ).join(", ")
        }`
      )
      if (extra > MEMORY_HOST_EXTRA_BYTES) throw new Error(`a memory-only install is effect + ${mib(extra)}`)
      for (const bin of [process.execPath, olderNode]) console.log(node(["host.js"], memoryHost, {}, bin).trim())
    }

    const serverUrl = process.env["TEST_DATABASE_URL"]
    if (serverUrl === undefined || serverUrl === "") {
      if (process.env["CI"] === "true") throw new Error("(h) needs a PostgreSQL server: TEST_DATABASE_URL is not set")
      step("(h) skipped: TEST_DATABASE_URL is not set")
    } else {
      step("(h) a host's own database: its tables, a separate migration step, its PgClient, a DML-only role")
      const database = `feedback_pack_check_${randomBytes(5).toString("hex")}`
      const role = dmlRole("feedback_pack_dml")
      const ownerUrl = withDatabase(serverUrl, database)
      cleanups.push(() =>
        ownerSql(serverUrl, [`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`, `DROP ROLE IF EXISTS ${role.role}`])
      )
      await ownerSql(serverUrl, [`CREATE DATABASE ${database}`])
      await ownerSql(ownerUrl, hostTables)
      const pgHost = Path.join(work, "pg-host")
      cpSync(Path.join(fixtures, "pg-host"), pgHost, { recursive: true })
      npm([
        "install",
        "--prefer-offline",
        files.core,
        files.client,
        files["adapter-postgres"],
        files["adapter-http"],
        files.widget,
        ...["effect", "@effect/sql-pg", "@effect/platform-node"].map((name) => `${name}@${devVersion(name)}`)
      ], pgHost)
      if (readdirSync(Path.join(pgHost, "node_modules")).includes("@electric-sql")) {
        throw new Error("a PostgreSQL-server host installed PGlite")
      }
      // The deploy pipeline's step, with the owner's rights; then the runtime role gets rows, never DDL.
      const migrate = Path.join(pgHost, "node_modules/@feedback/adapter-postgres/dist/bin/migrate.js")
      console.log(`feedback-pg-migrate: ${node([migrate], pgHost, { DATABASE_URL: ownerUrl }).trim().slice(0, 120)}…`)
      await ownerSql(ownerUrl, dmlRoleStatements("feedback", role))
      const appUrl = asRole(ownerUrl, role)
      console.log(node(["host.mjs"], pgHost, { APP_URL: appUrl }).trim())
      const [hostMigrations, hostProducts, publicTables, storeProducts] = await ownerSql(ownerUrl, [
        "SELECT version::text FROM public.schema_migrations",
        "SELECT sku FROM public.products ORDER BY id",
        "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename",
        "SELECT slug FROM feedback.products"
      ])
      const expect = (what: string, actual: unknown, expected: unknown) => {
        if (JSON.stringify(actual) !== JSON.stringify(expected)) {
          throw new Error(`${what}: ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`)
        }
      }
      expect("the host's schema_migrations", hostMigrations, [{ version: "20240101000000" }])
      expect("the host's products", hostProducts, [{ sku: "HOST-1" }, { sku: "HOST-2" }])
      expect("the tables in public", publicTables!.map((r) => r["tablename"]), [
        "customers",
        "products",
        "schema_migrations"
      ])
      expect("the store's products", storeProducts, [{ slug: "beside-mug" }])
      console.log("host database: public holds the host's three tables unchanged; the store's rows are in feedback")
    }

    step("(i) a host's property test written against @feedback/testing, run by the host's vitest")
    const vitest = node([Path.join(host, "node_modules/vitest/vitest.mjs"), "run", "property.test.mjs"], host)
    const passed = /Tests\s+(\d+) passed/.exec(vitest.replace(/\x1b\[[0-9;]*m/g, ""))?.[1]
    if (passed === undefined) throw new Error(`the host's vitest run reported no passed test:\n${vitest}`)
    console.log(`host property test: ${passed} passed`)

    console.log("pack-check: all steps passed")
  } finally {
    server?.kill("SIGTERM")
    for (const cleanup of cleanups) await cleanup().catch((e: unknown) => console.error(`pack-check: cleanup: ${e}`))
    if (!keep) rmSync(work, { recursive: true, force: true })
    else console.log(`pack-check: kept ${work}`)
  }
}

main().catch((error: unknown) => {
  const e = error as { message?: string; stdout?: string; stderr?: string }
  console.error(`pack-check: FAILED: ${e.message ?? String(error)}`)
  if (e.stdout) console.error(String(e.stdout).slice(-4000))
  if (e.stderr) console.error(String(e.stderr).slice(-4000))
  process.exit(1)
})
