/**
 * `npm run bench -- send`, on a PostgreSQL server: BENCH_EMAILS (default 10,000) due survey emails delivered by the
 * survey worker of a standalone server to a local SMTP server (`smtp-server`, accepting each message at once), vs
 * nodemailer sending the same messages (the raw messages the worker sent, with the same envelopes) directly over the
 * same pooled connections (`SMTP_URL` with `pool=true&maxConnections=5`, nodemailer's defaults for a pool), all
 * handed to the pool at once. The surveys are created by `PATCH /orders/bulk-update` under the guided setup's flow
 * (`delayDays: 0`) while the SMTP server holds its first message; timing starts when it lets go. Target ≥ 0.5×.
 * Also printed: the database's CPU per email (its backends' CPU from /proc, a local server only) and its
 * transactions per email (`pg_stat_database.xact_commit`: each statement outside a transaction is one round trip).
 * `BENCH_CPU_PROFILE=dir`: the server runs with `node --cpu-prof` and writes its profile there when it stops (the
 * whole run: the import and the bulk update too, before the sending).
 */
import { execFile, execFileSync } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { createTransport } from "nodemailer"
import type { AddressInfo } from "node:net"
import { promisify } from "node:util"
import { SMTPServer } from "smtp-server"
import { cpuMillis, fmt } from "./support/common.ts"
import { call, flowServer, importOrders } from "./support/surveys.ts"
import { recordRow } from "./support/targets.ts"

const emails = Number(process.env["BENCH_EMAILS"] ?? "10000")
const FROM = "Shop <reviews@shop.example>"

interface Received {
  readonly from: string
  readonly to: Array<string>
  readonly raw: Buffer
}

/** An SMTP server that keeps what it receives and holds each message until `open()` is called. */
const smtpServer = async () => {
  const received: Array<Received> = []
  let connections = 0
  let open!: () => void
  const gate = new Promise<void>((resolve) => open = resolve)
  let onCount: (() => void) | undefined
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS", "AUTH"],
    logger: false,
    onConnect: (_session, callback) => {
      connections++
      callback()
    },
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (c: Buffer) => chunks.push(c))
      stream.on("end", () => {
        void gate.then(() => {
          received.push({
            from: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks)
          })
          callback()
          onCount?.()
        })
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const port = (server.server.address() as AddressInfo).port
  return {
    received,
    connections: () => connections,
    open: () => open(),
    /** Resolves once `n` messages were accepted in all. */
    until: (n: number) =>
      new Promise<void>((resolve) => {
        onCount = () => received.length >= n && resolve()
        onCount()
      }),
    url: `smtp://127.0.0.1:${port}?pool=true&maxConnections=5`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/**
 * The CPU ms each client backend of `database` has used, by pid (every process whose title names it, a local server
 * only; autovacuum, which runs when it will, left out), merged into `seen`. Read at both ends of the run only (a scan of /proc blocks this process for milliseconds): a
 * backend that ends during the run is lost, so the figure can only be low (the server's pool keeps its connections).
 */
const sampleBackends = (database: string, seen: Map<number, number>) => {
  for (const entry of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(entry)) continue
    try {
      const title = readFileSync(`/proc/${entry}/cmdline`, "utf8")
      if (!title.includes(` ${database} `) || title.includes("autovacuum")) continue
    } catch {
      continue
    }
    const ms = cpuMillis(Number(entry))
    if (ms !== undefined) seen.set(Number(entry), ms)
  }
  return seen
}

/** Committed transactions, and the surveys table's row updates and how many of them were HOT (no index entries). */
const commits = (url: string) => {
  const [xact, updates, hot] = execFileSync("psql", [
    url,
    "-Atc",
    `SELECT pg_stat_force_next_flush(); SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())
       || ',' || coalesce((SELECT n_tup_upd || ',' || n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'surveys'), '0,0')`
  ], { encoding: "utf8" }).trim().split("\n").at(-1)!.split(",").map(Number)
  return { xact: xact!, updates: updates!, hot: hot! }
}

/**
 * Resolves once no survey has a step to run or in flight (polled each half second; the store's schema, §58). The
 * query runs in a child process without blocking this one, which runs the SMTP server the worker sends to.
 */
const allStepsDone = async (url: string, stopped: () => boolean) => {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 500))
    if (stopped()) return
    const { stdout } = await promisify(execFile)("psql", [
      url,
      "-Atc",
      "SELECT count(*) FROM surveys WHERE next_due_at IS NOT NULL OR claimed_by IS NOT NULL"
    ], { encoding: "utf8", env: { ...process.env, PGOPTIONS: "-c search_path=feedback" } })
    if (stopped() || Number(stdout.trim()) === 0) return
  }
}

const smtp = await smtpServer()
const profileDir = process.env["BENCH_CPU_PROFILE"]
const s = await flowServer({
  SMTP_URL: smtp.url,
  MAIL_FROM: FROM,
  REQUEST_TIMEOUT_MS: "600000",
  ...(profileDir === undefined ? {} : {
    NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --cpu-prof --cpu-prof-dir=${profileDir}`.trim()
  })
}, { delayDays: 0 })
let workerMs: number
let workerCpuMs: number | undefined
let databaseCpuMs: number | undefined
let transactions: number
let updates: { readonly all: number; readonly hot: number }
let sent: Array<Received>
try {
  await importOrders(s, emails, "open")
  const moved = await call(s.base, "PATCH", "/orders/bulk-update", s.key, { status: "fulfilled" })
  if (moved.count !== emails) throw new Error(`expected ${emails} orders moved, got ${moved.count}`)
  const db0 = new Map(sampleBackends(s.databaseName, new Map()))
  const db1 = new Map(db0)
  const commits0 = commits(s.databaseUrl)
  const t0 = performance.now()
  const cpu0 = cpuMillis(s.server.pid)
  smtp.open()
  // Every email, or every step done: a step the worker failed sends nothing, and the run must still end.
  let raced = false
  await Promise.race([smtp.until(emails), allStepsDone(s.databaseUrl, () => raced)])
  raced = true
  workerMs = performance.now() - t0
  const cpu1 = cpuMillis(s.server.pid)
  sampleBackends(s.databaseName, db1)
  databaseCpuMs = db1.size === 0 ? undefined : [...db1].reduce((n, [pid, ms]) => n + ms - (db0.get(pid) ?? 0), 0)
  // Less the two statements of this reading itself.
  const commits1 = commits(s.databaseUrl)
  transactions = commits1.xact - commits0.xact - 2
  updates = { all: commits1.updates - commits0.updates, hot: commits1.hot - commits0.hot }
  workerCpuMs = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0
  sent = smtp.received.splice(0)
} finally {
  await s.stop()
}
const workerConnections = smtp.connections()

const transport = createTransport(smtp.url)
const t1 = performance.now()
const cpuBefore = process.cpuUsage()
await Promise.all(sent.map((m) => transport.sendMail({ envelope: { from: m.from, to: m.to }, raw: m.raw })))
await smtp.until(sent.length)
const directMs = performance.now() - t1
const cpuUsed = process.cpuUsage(cpuBefore)
// The benchmark process runs nodemailer and the SMTP server in the baseline; the SMTP server only while the worker sends.
const directCpuMs = (cpuUsed.user + cpuUsed.system) / 1000
transport.close()
await smtp.close()

const n = sent.length
const r = directMs / workerMs
if (n < emails) {
  console.log(
    `\n  ${fmt(emails - n)} steps sent nothing (failed); rates are of the ${fmt(n)} sent`
  )
}
const size = sent.reduce((n, m) => n + m.raw.length, 0) / sent.length
console.log(
  `\nSending ${fmt(emails)} survey emails (${fmt(size)} bytes on average) to a local SMTP server, pooled connections\n`
)
console.log(
  `  baseline: nodemailer directly, all at once   ${fmt(n / (directMs / 1000))}/s   1.00×   (${
    (directMs / 1000).toFixed(2)
  } s)`
)
console.log(
  `  the survey worker                            ${fmt(n / (workerMs / 1000))}/s   ${r.toFixed(2)}×   (${
    (workerMs / 1000).toFixed(2)
  } s; target ≥ 0.5×)`
)
console.log(
  `  CPU per email (steadier than rates on a loaded machine): the server process ${
    workerCpuMs === undefined ? "n/a" : `${(workerCpuMs / n).toFixed(2)} ms`
  }, the database ${
    databaseCpuMs === undefined ? "n/a" : `${(databaseCpuMs / n).toFixed(2)} ms`
  }, the baseline's process (nodemailer and the SMTP server) ${(directCpuMs / n).toFixed(2)} ms`
)
console.log(`  database transactions per email (each a round trip or more): ${(transactions / n).toFixed(2)}`)
console.log(
  `  survey row updates per email ${(updates.all / n).toFixed(2)}, of them HOT (no new index entries) ${
    (updates.hot / n).toFixed(2)
  }`
)
console.log(`  SMTP connections opened: worker ${workerConnections}, both ${smtp.connections()}`)
recordRow("send", r, emails === 10_000 ? {} : { note: `${fmt(emails)} emails` })
