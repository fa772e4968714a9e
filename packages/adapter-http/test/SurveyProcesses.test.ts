/**
 * Survey flows across server processes on one PostgreSQL database, sending through nodemailer to a real SMTP server
 * (`smtp-server`) on loopback (docs/DECISIONS.md §48): two processes share the due requests and no one is sent twice;
 * one process killed with SIGKILL while it sends: nothing is sent twice, and nothing it had not started sending is
 * lost (the survivor sends it once the dead process's claims are recovered).
 */
import { Surveys } from "@feedback/core"
import { Effect } from "effect"
import { startSmtpReceiver } from "./SmtpReceiver.ts"
import { afterAll, expect, it } from "vitest"
import {
  describeWithServer,
  dropServerDatabase,
  freshServerDatabase
} from "../../adapter-postgres/test/TestDatabase.ts"
import { type ServerProcess, startServerProcess } from "./ServerProcess.ts"

const OPERATOR = "survey-processes-operator-token-0123456789abcdef"

const call = async (base: string, method: string, path: string, token: string, body?: unknown) => {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: res.status, body: await res.json() as any }
}

const eventually = async <A>(probe: () => Promise<A | undefined>, timeoutMs: number, what: string): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describeWithServer("survey flows across processes (PostgreSQL, SMTP)", (serverUrl) => {
  const cleanups: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup()
  }, 30_000)

  /** Two server processes on a fresh database, sending to `smtp`; an organization set up for immediate requests. */
  const start = async (smtpUrl: string, count: number) => {
    const databaseUrl = await Effect.runPromise(freshServerDatabase(serverUrl))
    const env = {
      DATABASE_URL: databaseUrl,
      OPERATOR_TOKEN: OPERATOR,
      LOG_REQUESTS: "false",
      SMTP_URL: smtpUrl,
      MAIL_FROM: "Shop <reviews@shop.example>",
      SURVEY_RECOVERY_MS: "2000"
    }
    const servers: Array<ServerProcess> = []
    for (let i = 0; i < 2; i++) servers.push(await startServerProcess(env))
    cleanups.push(async () => {
      await Promise.all(servers.map((s) => s.stop()))
      await dropServerDatabase(serverUrl, databaseUrl)
    })
    const [a, b] = servers.map((s) => s.url) as [string, string]
    const org = await call(a, "POST", "/operator/organizations", OPERATOR, {
      name: "Processes",
      apiRequestsPerMinute: 100_000
    })
    const key = (await call(a, "POST", `/operator/organizations/${org.body.id}/keys`, OPERATOR, {
      permissions: ["settings:write", "products:write", "orders:write", "reviews:read", "customers:read"]
    })).body.secretKey as string
    expect(
      (await call(a, "POST", "/organization/setup/reviews", key, { data: { delayDays: 0, reminder: false } })).status
    ).toBe(201)
    expect((await call(a, "POST", "/products", key, { slug: "mug", title: "Mug" })).status).toBe(201)
    const emails = Array.from({ length: count }, (_, i) => `shopper-${i}@example.com`)
    await Promise.all(
      emails.map((email, i) =>
        call(i % 2 === 0 ? a : b, "POST", "/orders", key, {
          customer: { email },
          lines: [{ productSlug: "mug" }],
          status: "fulfilled"
        })
          .then((res) => expect(res.status).toBe(201))
      )
    )
    return { servers, key, emails, a, b }
  }

  /** Every survey once none has an email step left to run. */
  const settled = (base: string, key: string, count: number) =>
    eventually(
      async () => {
        const page = await call(base, "GET", "/surveys?limit=250", key)
        const surveys: Array<any> = page.body.data
        return surveys.length === count &&
            surveys.every((s) => s.steps.every((step: any) => step.type !== "email" || step.outcome !== null))
          ? surveys
          : undefined
      },
      30_000,
      "every survey's email to be sent"
    )

  it("two processes share the due requests: each is sent exactly once", async () => {
    const smtp = await startSmtpReceiver(5)
    cleanups.push(smtp.close)
    const { a, emails, key } = await start(smtp.url, 40)
    const surveys = await settled(a, key, emails.length)
    expect(surveys.filter((s) => s.status !== "sent").map((s) => [s.status, s.reason, s.steps])).toEqual([])
    expect([...smtp.received].sort()).toEqual([...emails].sort())
  }, 90_000)

  it("a process killed while sending: nothing is sent twice, and nothing it had not started is lost", async () => {
    const smtp = await startSmtpReceiver(40)
    cleanups.push(smtp.close)
    const { b, emails, key, servers } = await start(smtp.url, 60)
    // Kill the first process for good once mail is flowing (it is then most likely in the middle of a send).
    await eventually(async () => smtp.received.length >= 5 ? true : undefined, 30_000, "the first messages")
    process.kill(servers[0]!.pid, "SIGKILL")
    const atKill = smtp.received.length
    expect(atKill).toBeLessThan(emails.length)
    const surveys = await settled(b, key, emails.length)
    const counts = new Map<string, number>()
    for (const to of smtp.received) counts.set(to, (counts.get(to) ?? 0) + 1)
    expect([...counts.values()].every((n) => n === 1)).toBe(true)
    // The killed process had at most `WAVES_IN_FLIGHT` waves marked as sending (`concurrency` steps each, each wave's
    // outcomes recorded together): only such steps may be failed (sent or not, never resent); the rest is sent once.
    const failed = surveys.filter((s) => s.steps.some((step: any) => step.outcome === "failed"))
    expect(failed.length).toBeLessThanOrEqual(
      Surveys.WAVES_IN_FLIGHT * Surveys.defaultSurveyWorkerSettings("any").concurrency
    )
    const sent = surveys.filter((s) => s.status === "sent")
    expect(sent.length).toBe(emails.length - failed.length)
    // Every survey recorded sent reached the SMTP server exactly once; all but the failed one did.
    const customers: Array<any> = (await call(b, "GET", "/customers?limit=250", key)).body.data
    const emailOf = new Map(customers.map((c) => [c.id, c.email]))
    for (const survey of sent) expect(counts.get(emailOf.get(survey.customerId))).toBe(1)
    expect(smtp.received.length).toBeGreaterThanOrEqual(emails.length - failed.length)
  }, 90_000)
})
