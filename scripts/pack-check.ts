/**
 * Proof that the packages work outside this repository, as a host application installs them: builds and packs every
 * package, installs the tarballs into a scratch project outside the workspace, and there, with plain Node and no
 * type stripping:
 *   (a) imports every entry point of every package,
 *   (b) runs an embedding host (node:http + makeNodeHandler) over the memory store and calls it,
 *   (c) type-checks a TypeScript host with strict, noUnusedLocals and skipLibCheck: false,
 *   (d) starts `feedback-admin-api serve` from node_modules/.bin and calls it,
 *   (e) installs the client alone into a second project: under 20 MB, no PGlite, pg or nodemailer, and its fetch
 *       client calls the running server.
 *
 *   npm run pack-check            (also run by `npm test`, through test/PackCheck.test.ts)
 *
 * Prints one line per step and exits non-zero on the first failure.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"

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
const fixtures = Path.join(import.meta.dirname, "pack-check")

const step = (name: string) => console.log(`pack-check: ${name}`)
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
const node = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) =>
  run(process.execPath, args, cwd, hostEnv(env))

const sizeOf = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((total, entry) => {
    const path = Path.join(dir, entry.name)
    return total + (entry.isDirectory() ? sizeOf(path) : entry.isFile() ? statSync(path).size : 0)
  }, 0)

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
    }

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
      `vitest@${devVersion("vitest")}`,
      `@effect/vitest@${devVersion("@effect/vitest")}`,
      `fast-check@${devVersion("fast-check")}`,
      `typescript@${devVersion("typescript")}`,
      `@types/node@${devVersion("@types/node")}`
    ], host)

    step("(a) import every entry point with plain node")
    console.log(node(["imports.mjs"], host).trim())

    step("(b) an embedding host over the memory store")
    console.log(node(["embed.mjs"], host).trim())

    step("(c) type-check a TypeScript host (strict, noUnusedLocals, skipLibCheck: false)")
    node([Path.join(host, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], host)

    step("(d) feedback-admin-api --help, then serve")
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

    step("(e) the client alone")
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

    console.log("pack-check: all steps passed")
  } finally {
    server?.kill("SIGTERM")
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
