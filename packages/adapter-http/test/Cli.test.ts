/**
 * The `feedback-admin-api` CLI as a user runs it: help on every command, `serve` answering requests, `org` and
 * `key` provisioning through the served operator API (the issued key works, the revoked one stops at once), and
 * `migrate` / `migrate --status` on an embedded database.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServerProcess, startServerProcess } from "./ServerProcess.ts"

const bin = Path.resolve(import.meta.dirname, "../src/cli/bin.ts")
const OPERATOR_TOKEN = "cli-test-operator-token-0123456789abcdef"

/**
 * Each call starts a process that compiles the CLI's TypeScript on its way up: seconds on a loaded machine. The tests
 * wait for the processes to end, with bounds far above what they need (a hang still fails, after minutes).
 */
const PROCESS_TEST_TIMEOUT = 300_000

const run = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [bin, ...args], {
      env: { ...process.env, ...env }
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
}

describe("help", () => {
  it.each([
    "",
    "serve",
    "migrate",
    "org",
    "org create",
    "key",
    "key create",
    "key revoke",
    "import-jobs",
    "import-jobs watch",
    "export-jobs watch"
  ])(
    "feedback-admin-api %s --help describes the command and starts nothing",
    async (name) => {
      const command = name === "" ? [] : name.split(" ")
      const { code, stdout } = await run([...command, "--help"])
      expect(code).toBe(0)
      expect(stdout).toContain("USAGE")
      expect(stdout).toContain(`feedback-admin-api ${command.join(" ")}`.trim())
    },
    PROCESS_TEST_TIMEOUT
  )
})

describe("serve, org create, key create and revoke", () => {
  let server: ServerProcess
  beforeAll(async () => {
    server = await startServerProcess({ DATABASE_URL: "memory", OPERATOR_TOKEN, LOG_REQUESTS: "false" }, {
      script: bin,
      args: ["serve"],
      timeoutMs: 240_000
    })
  }, PROCESS_TEST_TIMEOUT)
  afterAll(() => server.stop())

  it("provisions a tenant whose key works until it is revoked", async () => {
    const env = { OPERATOR_TOKEN, ADMIN_API_URL: server.url }
    const org = await run(["org", "create", "--name", "CLI shop", "--requests-per-minute", "120"], env)
    expect(org.code, org.stderr).toBe(0)
    const organization = JSON.parse(org.stdout) as { id: string; plan: { apiRequestsPerMinute: number } }
    expect(organization.plan.apiRequestsPerMinute).toBe(120)

    const key = await run(
      ["key", "create", "--org", organization.id, "--permissions", "settings:read,reviews:read"],
      env
    )
    expect(key.code, key.stderr).toBe(0)
    const issued = JSON.parse(key.stdout) as { id: string; secretKey: string; permissions: Array<string> }
    expect(issued.permissions).toEqual(["settings:read", "reviews:read"])
    const call = () => fetch(`${server.url}/organization`, { headers: { authorization: `Bearer ${issued.secretKey}` } })
    expect((await call()).status).toBe(200)

    const revoked = await run(["key", "revoke", "--org", organization.id, "--key", issued.id], env)
    expect(revoked.code, revoked.stderr).toBe(0)
    expect((await call()).status).toBe(401)
  }, PROCESS_TEST_TIMEOUT)

  it("import-jobs watch draws progress until the job ends, then prints it; a failed job exits non-zero", async () => {
    const env = { OPERATOR_TOKEN, ADMIN_API_URL: server.url }
    const org = JSON.parse((await run(["org", "create", "--name", "Jobs shop"], env)).stdout) as { id: string }
    const issued = JSON.parse((await run(["key", "create", "--org", org.id], env)).stdout) as { secretKey: string }
    const upload = (query: string, body: string) =>
      fetch(`${server.url}/import-jobs?${query}`, {
        method: "POST",
        headers: { authorization: `Bearer ${issued.secretKey}`, "content-type": "application/x-ndjson" },
        body
      }).then((r) => r.json() as Promise<{ id: string }>)
    const job = await upload("type=products", "{\"slug\":\"a\",\"title\":\"A\"}\n{\"slug\":\"b\",\"title\":\"B\"}\n")
    const watched = await run(["import-jobs", "watch", job.id, "--interval", "100"], {
      ...env,
      ADMIN_API_KEY: issued.secretKey
    })
    expect(watched.code, watched.stderr).toBe(0)
    expect(JSON.parse(watched.stdout)).toMatchObject({ id: job.id, status: "succeeded", progress: { importedRows: 2 } })
    expect(watched.stderr).toContain("100% 2/2 rows · 0 skipped · succeeded")
    const strict = await upload("type=products&strict=true", "{\"slug\":\"a\",\"title\":\"Again\"}\n")
    const failed = await run(["import-jobs", "watch", strict.id, "--interval", "100"], {
      ...env,
      ADMIN_API_KEY: issued.secretKey
    })
    expect(failed.code).not.toBe(0)
    expect(failed.stdout + failed.stderr).toContain("failed")
    const noKey = await run(["import-jobs", "watch", job.id], env)
    expect(noKey.stdout + noKey.stderr).toContain("ADMIN_API_KEY")
  }, PROCESS_TEST_TIMEOUT)

  it("says what is wrong, with a failing exit code", async () => {
    const noToken = await run(["org", "create", "--name", "x"], { ADMIN_API_URL: server.url, OPERATOR_TOKEN: "" })
    expect(noToken.code).not.toBe(0)
    expect(noToken.stdout + noToken.stderr).toContain("OPERATOR_TOKEN")
    const wrongToken = await run(["org", "create", "--name", "x"], {
      ADMIN_API_URL: server.url,
      OPERATOR_TOKEN: "wrong-token-wrong-token-wrong-token"
    })
    expect(wrongToken.code).not.toBe(0)
    const badPermission = await run(["key", "create", "--org", "x", "--permissions", "reviews:delete"], {
      OPERATOR_TOKEN
    })
    expect(badPermission.code).not.toBe(0)
    expect(badPermission.stdout + badPermission.stderr).toContain("Unknown permission reviews:delete")
  }, PROCESS_TEST_TIMEOUT)
})

describe("migrate", () => {
  const dataDir = mkdtempSync(Path.join(tmpdir(), "fb-cli-"))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
  const env = { DATA_DIR: dataDir, DATABASE_URL: "" }

  it("lists pending migrations, applies them once, then reports none pending", async () => {
    const before = await run(["migrate", "--status"], env)
    expect(before.code, before.stderr).toBe(0)
    expect(before.stdout).toMatch(/0 applied, [1-9]\d* pending/)
    const applied = await run(["migrate"], env)
    expect(applied.code, applied.stderr).toBe(0)
    expect(applied.stdout).toContain("applied 1_organizations")
    const after = await run(["migrate", "--status"], env)
    expect(after.stdout).toMatch(/[1-9]\d* applied, 0 pending/)
    expect((await run(["migrate"], env)).stdout).toContain("up to date")
  }, PROCESS_TEST_TIMEOUT)

  it("refuses the memory store", async () => {
    const memory = await run(["migrate"], { DATABASE_URL: "memory" })
    expect(memory.code).not.toBe(0)
    expect(memory.stdout + memory.stderr).toContain("no schema to migrate")
  }, PROCESS_TEST_TIMEOUT)
})
