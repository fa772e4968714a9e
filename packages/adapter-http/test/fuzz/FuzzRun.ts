/**
 * Sends generated requests through the in-process fetch handler, checks every answer against docs/DECISIONS.md §1/§11,
 * learns real ids and cursors from successful answers (so later requests go deeper), and groups failures by
 * endpoint, status and problem with the smallest example of each: one run shows every kind of failure at once.
 */
import type { EndpointShape } from "./ApiShape.ts"
import { responseCollectionOf } from "./ApiShape.ts"
import { type FuzzContext, type FuzzRequest, generateRequest, makeRng, requestSeed } from "./FuzzRequests.ts"

export type Send = (request: Request) => Promise<Response>

export interface Answer {
  readonly status: number
  readonly contentType: string | null
  readonly text: string
  readonly ms: number
}

export const toRequest = (
  r: {
    readonly method: string
    readonly url: string
    readonly headers: Record<string, string>
    readonly body: string | undefined
  }
) =>
  new Request(`http://fuzz.test${r.url}`, {
    method: r.method,
    headers: r.headers,
    ...(r.body === undefined ? {} : { body: r.body })
  })

export const send = async (handler: Send, request: Request): Promise<Answer> => {
  const started = performance.now()
  const response = await handler(request)
  const text = await response.text()
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    text,
    ms: performance.now() - started
  }
}

// --- the checks -----------------------------------------------------------------------------------------------------

const parse = (text: string): { readonly ok: true; readonly value: unknown } | { readonly ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** docs/DECISIONS.md §1: `{error: {code, message, details?}}` and nothing else at the top. */
const isEnvelope = (u: unknown): boolean =>
  isObject(u) && Object.keys(u).length === 1 && isObject(u["error"]) &&
  typeof u["error"]["code"] === "string" && typeof u["error"]["message"] === "string" &&
  (u["error"]["details"] === undefined || isObject(u["error"]["details"]))

/** Internals that must never reach a client (docs/DECISIONS.md §1): stack frames, SQL client errors, module paths. */
const LEAK = /\n\s+at |\bSqlError\b|\bPgClient\b|node_modules|\.ts:\d+:\d+|HttpApiSchemaError/

/** What is wrong with an answer; empty when it is acceptable. */
export const problemsOf = (request: FuzzRequest, answer: Answer): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const body = parse(answer.text)
  if (answer.status >= 500) problems.push("server error")
  if (answer.status >= 200 && answer.status < 300) {
    // Export downloads are files (CSV or NDJSON); a storefront preflight (OPTIONS) is a 204 with no body; every other
    // success is JSON.
    const file = /^(text\/csv|application\/x-ndjson)/.test(answer.contentType ?? "")
    const preflight = request.method === "OPTIONS" && answer.status === 204 && answer.text === ""
    if (!body.ok && !file && !preflight) problems.push("2xx body is not JSON")
  } else {
    const mediaType = answer.contentType?.split(";")[0]?.trim().toLowerCase()
    if (mediaType !== "application/json") problems.push(`error Content-Type is ${JSON.stringify(answer.contentType)}`)
    if (!body.ok) problems.push("error body is not JSON")
    else if (!isEnvelope(body.value)) problems.push("error body is not the {error:{code,message,details?}} envelope")
    else {
      const issues = (body.value as { error: { details?: { issues?: unknown } } }).error.details?.issues
      if (Array.isArray(issues) && issues.length > 20) problems.push(`${issues.length} issues listed (at most 20)`)
    }
    if (LEAK.test(answer.text)) problems.push("internal detail in the error body")
  }
  if (request.crossOrganization && ![400, 404, 429].includes(answer.status)) {
    problems.push("organization B's record, asked for by A, was not a 404")
  }
  return problems
}

// --- learning from answers ------------------------------------------------------------------------------------------

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const POOL_CAP = 200

/** Remembers the ids and cursors of a successful answer by the caller whose pools they belong to. */
export const learn = (ctx: FuzzContext, request: FuzzRequest, answer: Answer) => {
  if (answer.status < 200 || answer.status >= 300 || request.method !== request.endpoint.method) return
  const auth = request.headers["authorization"]
  const pool = auth === `Bearer ${ctx.keys.full}`
    ? ctx.own
    : auth === `Bearer ${ctx.keys.operator}`
    ? ctx.operatorOwn
    : undefined
  if (pool === undefined) return
  if (request.method === "DELETE" && /\/:[^/]+$/.test(request.endpoint.path)) {
    // The deleted record is the one the path ends with; keep naming it and every later request is a 404.
    const deleted = request.pathIds.at(-1)
    if (deleted !== undefined) pool.remove(deleted[0], deleted[1])
  }
  const body = parse(answer.text)
  if (!body.ok || !isObject(body.value)) return
  const collection = responseCollectionOf(request.endpoint.path)
  const records = Array.isArray(body.value["data"]) ? body.value["data"] : [body.value]
  for (const record of records) {
    if (
      isObject(record) && typeof record["id"] === "string" && UUID.test(record["id"]) &&
      pool.of(collection).length < POOL_CAP
    ) {
      pool.add(collection, record["id"])
    }
  }
  const cursor = body.value["nextCursor"]
  if (typeof cursor === "string") {
    const known = ctx.cursors.get(request.endpoint.path) ?? []
    if (known.length < POOL_CAP && !known.includes(cursor)) known.push(cursor)
    ctx.cursors.set(request.endpoint.path, known)
  }
}

// --- failures, grouped --------------------------------------------------------------------------------------------

export interface Failure {
  readonly request: FuzzRequest
  readonly answer: Answer
}

const clip = (s: string, n = 240) => (s.length <= n ? s : `${s.slice(0, n)}… (${s.length} chars)`)

export class FailureLog {
  readonly groups = new Map<string, { count: number; example: Failure }>()
  add(request: FuzzRequest, answer: Answer, problems: ReadonlyArray<string>) {
    // The problems of one answer are one group: a 415 in text/plain is one finding, not two.
    for (const problem of problems.length === 0 ? [] : [problems.join("; ")]) {
      const key = `${request.method} ${request.endpoint.path} → ${answer.status}: ${problem}`
      const group = this.groups.get(key)
      // The smallest example is the easiest reproduction: fewest changes, then fewest characters.
      const size = (f: FuzzRequest) => f.labels.length * 1e9 + f.url.length + (f.body?.length ?? 0)
      if (group === undefined) this.groups.set(key, { count: 1, example: { request, answer } })
      else {
        group.count++
        if (size(request) < size(group.example.request)) group.example = { request, answer }
      }
    }
  }
  get size() {
    return this.groups.size
  }
  /** One paragraph per group: what, how often, and a request that reproduces it. */
  report(keyNames: ReadonlyArray<readonly [string, string]>): string {
    const masked = (s: string) => keyNames.reduce((acc, [key, name]) => acc.split(key).join(`<${name}>`), s)
    return [...this.groups.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([key, { count, example: { answer, request } }]) =>
        [
          `✗ ${key}  (×${count}; example #${request.index}: ${request.labels.join("; ") || "a generated request"})`,
          `    ${request.method} ${clip(request.url, 200)}`,
          `    headers ${masked(JSON.stringify(request.headers))}`,
          ...(request.body === undefined ? [] : [`    body ${clip(JSON.stringify(request.body))}`]),
          `    → ${answer.status} ${answer.contentType ?? "(no content type)"} ${
            clip(JSON.stringify(answer.text), 300)
          }`
        ].join("\n")
      )
      .join("\n")
  }
}

// --- the run --------------------------------------------------------------------------------------------------------

export interface RunResult {
  readonly sent: number
  readonly unsendable: number
  readonly ms: number
  readonly statuses: Map<number, number>
  /** Requests and 2xx answers by endpoint: how deep the run got, endpoint by endpoint. */
  readonly byEndpoint: Map<string, { sent: number; succeeded: number }>
  readonly failures: FailureLog
  /** How many answers the targeted checks saw: B's ids used by A, upper-case ids compared with lower-case. */
  readonly probes: { crossOrganization: number; upperCase: number }
  /** The slowest requests that carried a hostile value, slowest first. */
  readonly slowest: ReadonlyArray<{ readonly request: FuzzRequest; readonly ms: number }>
}

export const runFuzz = async (options: {
  readonly handler: Send
  readonly endpoints: ReadonlyArray<EndpointShape>
  readonly ctx: FuzzContext
  readonly seed: number
  readonly count: number
  readonly concurrency: number
  readonly keepSlowest?: number
  /** Creates fresh records every `every` requests, so deletions do not leave later requests nothing to reach. */
  readonly reseed?: { readonly every: number; readonly run: () => Promise<void> }
}): Promise<RunResult> => {
  const { concurrency, count, ctx, endpoints, handler, seed } = options
  const keep = options.keepSlowest ?? 5
  const failures = new FailureLog()
  const probes = { crossOrganization: 0, upperCase: 0 }
  const statuses = new Map<number, number>()
  const byEndpoint = new Map(endpoints.map((e) => [`${e.method} ${e.path}`, { sent: 0, succeeded: 0 }]))
  const slowest: Array<{ request: FuzzRequest; ms: number }> = []
  let next = 0
  let unsendable = 0
  const started = performance.now()
  const one = async (index: number) => {
    const rng = makeRng(requestSeed(seed, index))
    const request = generateRequest(index, rng, rng.pick(endpoints), ctx)
    let built: Request
    try {
      built = toRequest(request)
    } catch {
      unsendable++ // fetch refuses it before any server could see it (e.g. a GET with a body): not the API's doing
      return
    }
    let answer: Answer
    try {
      answer = await send(handler, built)
    } catch (e) {
      answer = { status: 0, contentType: null, text: String(e), ms: 0 }
      failures.add(request, answer, ["the fetch handler rejected"])
      return
    }
    statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1)
    const tally = byEndpoint.get(`${request.endpoint.method} ${request.endpoint.path}`)!
    tally.sent++
    if (answer.status >= 200 && answer.status < 300) tally.succeeded++
    failures.add(request, answer, problemsOf(request, answer))
    if (request.crossOrganization) probes.crossOrganization++
    if (request.lowerCaseTwin !== undefined) {
      probes.upperCase++
      // docs/DECISIONS.md §11: an id is the same id in either letter case, and answers carry it in lower case.
      const twin = await send(handler, toRequest({ ...request, url: request.lowerCaseTwin }))
      // A concurrent DELETE may remove the record between the two; asking once more in upper case tells that apart.
      const again = twin.status === answer.status ? answer : await send(handler, toRequest(request))
      if (twin.status !== again.status) {
        failures.add(request, again, [`upper-case id answered ${again.status}, lower-case ${twin.status}`])
      } else {
        const body = parse(answer.text)
        const id = body.ok && isObject(body.value) ? body.value["id"] : undefined
        if (typeof id === "string" && id !== id.toLowerCase()) {
          failures.add(request, answer, ["the record's id is answered in upper case"])
        }
      }
    }
    learn(ctx, request, answer)
    if (request.labels.length > 0 && (slowest.length < keep || answer.ms > slowest[slowest.length - 1]!.ms)) {
      slowest.push({ request, ms: answer.ms })
      slowest.sort((a, b) => b.ms - a.ms)
      slowest.length = Math.min(slowest.length, keep)
    }
  }
  // Each request starts in a macrotask of its own, as a request read from a socket would. The in-process handler
  // answers through promise jobs alone, so without this the event loop would not turn once in the whole run and
  // its delay could not be measured.
  const worker = async () => {
    try {
      while (next < count) {
        await new Promise((resolve) => setImmediate(resolve))
        const index = next++
        if (options.reseed !== undefined && index > 0 && index % options.reseed.every === 0) await options.reseed.run()
        await one(index)
      }
    } catch (e) {
      next = count // a harness error: stop the other workers before the server is disposed under them
      throw e
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  return {
    sent: count - unsendable,
    unsendable,
    ms: performance.now() - started,
    statuses,
    byEndpoint,
    failures,
    probes,
    slowest
  }
}
