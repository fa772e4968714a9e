/**
 * Turns an endpoint's shape into requests: a Schema-derived sample of its path parameters, query and body, with
 * real record ids put in (so operations reach the store), then, by chance, hostile values from the corpus put in
 * their place. Each request records what was done to it (`labels`), so a failure report reads as a recipe.
 * Request `i` of a run draws from its own generator seeded by (seed, i): any one request can be regenerated.
 */
import type { EndpointShape } from "./ApiShape.ts"
import { collectionOf } from "./ApiShape.ts"
import {
  type Hostile,
  hostileAuthorizations,
  hostileContentTypes,
  hostileImportFiles,
  hostileJson,
  hostileQueryShapes,
  hostileQueryValues,
  hostileSegments,
  hostileStrings,
  isRaw,
  malformedBodies
} from "./HostileCorpus.ts"

// --- randomness ----------------------------------------------------------------------------------------------------

export interface Rng {
  readonly next: () => number
  readonly int: (n: number) => number
  readonly chance: (p: number) => boolean
  readonly pick: <A>(xs: ReadonlyArray<A>) => A
}

/** mulberry32: tiny, fast and good enough to choose among corpus entries. */
export const makeRng = (seed: number): Rng => {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return { next, int, chance: (p) => next() < p, pick: (xs) => xs[int(xs.length)]! }
}

export const requestSeed = (seed: number, index: number) =>
  (Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) + index * 0x27d4eb2f) >>> 0

/** Picks one of weighted alternatives. */
const weighted = <A>(rng: Rng, table: ReadonlyArray<readonly [number, A]>): A => {
  let r = rng.next() * table.reduce((sum, [w]) => sum + w, 0)
  for (const [w, a] of table) if ((r -= w) < 0) return a
  return table[table.length - 1]![1]
}

// --- what the generator can draw on --------------------------------------------------------------------------------

/** Record ids by collection (`products`, `reviews`, `keys`, …): the path segment an id follows. */
export class IdPool {
  private readonly byCollection = new Map<string, Array<string>>()
  add(collection: string, id: string) {
    const ids = this.byCollection.get(collection) ?? []
    if (!ids.includes(id)) ids.push(id)
    this.byCollection.set(collection, ids)
  }
  remove(collection: string, id: string) {
    const ids = this.byCollection.get(collection)
    if (ids !== undefined) this.byCollection.set(collection, ids.filter((x) => x !== id))
  }
  of(collection: string): ReadonlyArray<string> {
    return this.byCollection.get(collection) ?? []
  }
  all(): ReadonlyArray<string> {
    return [...this.byCollection.values()].flat()
  }
}

export interface FuzzKeys {
  /** Every permission, organization A (high rate limit): most requests. */
  readonly full: string
  readonly readOnly: string
  readonly revoked: string
  /** An organization with a low rate limit, so 429s are part of the run. */
  readonly lowLimit: string
  readonly operator: string
  /** Organization A's publishable key, and a revoked one (the storefront scheme). */
  readonly publishable: string
  readonly revokedPublishable: string
}

export interface FuzzContext {
  readonly keys: FuzzKeys
  /** Organization A's records (and, for operator routes, the organizations and keys the operator may touch). */
  readonly own: IdPool
  readonly operatorOwn: IdPool
  /** Organization B's records: used as A, every one must be a 404. */
  readonly other: IdPool
  /** Real `nextCursor`s by path template, to replay and to tamper with. */
  readonly cursors: Map<string, Array<string>>
  readonly samples: (endpoint: EndpointShape, slot: "params" | "query" | "payload") => ReadonlyArray<unknown>
  /**
   * Values that were accepted, by field name, learned from the set-up requests (`url`, `events`, `product`, …):
   * rules the schemas cannot express (a resolvable webhook host, a catalog event name, an existing slug) would
   * otherwise stop almost every generated body at validation, before any hostile value could go deeper.
   */
  readonly examples: Map<string, Array<unknown>>
}

/** Remembers the fields of an accepted body as examples for generated ones. */
export const rememberExamples = (examples: Map<string, Array<unknown>>, body: unknown) => {
  if (Array.isArray(body)) return body.forEach((b) => rememberExamples(examples, b))
  if (typeof body !== "object" || body === null) return
  for (const [key, value] of Object.entries(body)) {
    if (typeof value === "object" && value !== null && !Array.isArray(value)) rememberExamples(examples, value)
    else if (Array.isArray(value) && value.some((v) => typeof v === "object" && v !== null)) {
      rememberExamples(examples, value)
    } else {
      const known = examples.get(key) ?? []
      if (known.length < 16 && !known.some((k) => JSON.stringify(k) === JSON.stringify(value))) known.push(value)
      examples.set(key, known)
    }
  }
}

export interface FuzzRequest {
  readonly index: number
  readonly endpoint: EndpointShape
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: string | undefined
  readonly labels: ReadonlyArray<string>
  /** The real ids put in the path, by collection: a successful DELETE takes them out of the pool. */
  readonly pathIds: ReadonlyArray<readonly [string, string]>
  /** A well-formed request by A naming B's record in the path: anything but 404 (or 400/429) is a leak. */
  readonly crossOrganization: boolean
  /** For a GET whose only change is an upper-cased id: the same URL with its path in lower case (query values such as `include=importJob` are case-sensitive), which must answer alike. */
  readonly lowerCaseTwin: string | undefined
}

// --- serialisation --------------------------------------------------------------------------------------------------

/** JSON text with `raw(...)` values spliced in verbatim. */
export const toJsonText = (value: unknown): string => {
  const raws: Array<string> = []
  const text = JSON.stringify(value, (_, v) => {
    if (!isRaw(v)) return v
    raws.push(v.rawJson)
    return `\u0001raw${raws.length - 1}\u0001`
  })
  return raws.length === 0 ? text : text.replace(/"\\u0001raw(\d+)\\u0001"/g, (_, i: string) => raws[Number(i)]!)
}

/** encodeURIComponent, except lone surrogates (which it refuses) are sent as their WTF-8 bytes. */
export const encodeComponent = (s: string): string => {
  try {
    return encodeURIComponent(s)
  } catch {
    let out = ""
    for (const ch of s) {
      const c = ch.charCodeAt(0)
      out += ch.length === 1 && c >= 0xd800 && c <= 0xdfff
        ? [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)].map((b) => "%" + b.toString(16).toUpperCase())
          .join("")
        : encodeURIComponent(ch)
    }
    return out
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// --- the parts of a request -----------------------------------------------------------------------------------------

type Labels = Array<string>

const authorization = (rng: Rng, endpoint: EndpointShape, ctx: FuzzContext, labels: Labels): string | undefined => {
  const bearer = (key: string) => `Bearer ${key}`
  const hostile = (): string | undefined => {
    const h = rng.pick(hostileAuthorizations)
    labels.push(`auth: ${h.name}`)
    return h.value
  }
  if (endpoint.auth === "none") return rng.chance(0.9) ? undefined : hostile()
  if (endpoint.auth === "operator") {
    return weighted<() => string | undefined>(rng, [
      [90, () => bearer(ctx.keys.operator)],
      [5, () => (labels.push("auth: a secret key on an operator route"), bearer(ctx.keys.full))],
      [5, hostile]
    ])()
  }
  return weighted<() => string | undefined>(rng, [
    [82, () => bearer(ctx.keys.full)],
    [4, () => (labels.push("auth: read-only key"), bearer(ctx.keys.readOnly))],
    [4, () => (labels.push("auth: low-rate-limit organization"), bearer(ctx.keys.lowLimit))],
    [2, () => (labels.push("auth: revoked key"), bearer(ctx.keys.revoked))],
    [2, () => (labels.push("auth: the operator token"), bearer(ctx.keys.operator))],
    [6, hostile]
  ])()
}

/** The storefront scheme: usually A's publishable key; sometimes a revoked one, a secret key, none or a hostile value. */
const publishableKeyHeaders = (rng: Rng, ctx: FuzzContext, labels: Labels): Record<string, string> =>
  weighted<() => Record<string, string>>(rng, [
    [84, () => ({ "x-publishable-key": ctx.keys.publishable })],
    [4, () => (labels.push("auth: revoked publishable key"), { "x-publishable-key": ctx.keys.revokedPublishable })],
    [4, () => (labels.push("auth: a secret key as publishable key"), { "x-publishable-key": ctx.keys.full })],
    [4, () => (labels.push("auth: a secret key on a storefront route"), { authorization: `Bearer ${ctx.keys.full}` })],
    [4, () => {
      const h = rng.pick(hostileAuthorizations)
      labels.push(`auth: ${h.name}`)
      return h.value === undefined ? {} : { "x-publishable-key": h.value }
    }]
  ])()

/** One path parameter: usually a real id; sometimes B's, upper-cased, unknown or hostile. */
const pathValue = (
  rng: Rng,
  endpoint: EndpointShape,
  param: string,
  sampled: unknown,
  ctx: FuzzContext,
  labels: Labels,
  cross: { used: boolean; ids: Array<readonly [string, string]> }
): string => {
  const collection = collectionOf(endpoint.path, param)
  const own = (endpoint.auth === "operator" ? ctx.operatorOwn : ctx.own).of(collection)
  const other = endpoint.auth === "operator" ? [] : ctx.other.of(collection)
  const generated = typeof sampled === "string" ? sampled : String(sampled)
  const choice = weighted(
    rng,
    [
      [own.length > 0 ? 58 : 0, "own"],
      [other.length > 0 ? 10 : 0, "other"],
      [own.length > 0 ? 7 : 0, "upper"],
      [10, "generated"],
      [15, "hostile"]
    ] as const
  )
  switch (choice) {
    case "own": {
      const id = rng.pick(own)
      cross.ids.push([collection, id])
      return id
    }
    case "other":
      labels.push(`path ${param}: organization B's record`)
      cross.used = true
      return rng.pick(other)
    case "upper":
      labels.push(`path ${param}: upper-case id`)
      return rng.pick(own).toUpperCase()
    case "generated":
      labels.push(`path ${param}: generated ${JSON.stringify(generated).slice(0, 60)}`)
      return encodeComponent(generated)
    case "hostile": {
      const h = rng.pick(hostileSegments)
      labels.push(`path ${param}: ${h.name}`)
      return h.value
    }
  }
}

const queryValueFor = (rng: Rng, name: string, ctx: FuzzContext, endpoint: EndpointShape, labels: Labels): string => {
  const cursors = ctx.cursors.get(endpoint.path) ?? []
  if (name === "cursor" && cursors.length > 0 && rng.chance(0.4)) {
    const real = rng.pick(cursors)
    if (rng.chance(0.3)) {
      labels.push("query cursor: a real cursor")
      return real
    }
    const at = rng.int(real.length)
    labels.push("query cursor: a real cursor with one character changed")
    return real.slice(0, at) + (real[at] === "A" ? "B" : "A") + real.slice(at + 1)
  }
  const specific = hostileQueryValues[name]
  const h: Hostile<string> = specific !== undefined && rng.chance(0.7) ? rng.pick(specific) : rng.pick(hostileStrings)
  labels.push(`query ${name}: ${h.name}`)
  return h.value
}

const queryString = (rng: Rng, endpoint: EndpointShape, ctx: FuzzContext, labels: Labels): string => {
  const names = endpoint.query === undefined
    ? []
    : Object.keys((endpoint.query as unknown as { fields: object }).fields ?? {})
  // Each generated parameter is kept with a low chance: random `sort` or `filter` text is nearly always a 400, and
  // a hostile value should meet an otherwise valid query so that it reaches the filter compiler and the store.
  const sampled = endpoint.query === undefined
    ? {}
    : (rng.pick(ctx.samples(endpoint, "query")) as Record<string, unknown>)
  const query: Record<string, unknown> = Object.fromEntries(Object.entries(sampled).filter(() => rng.chance(0.25)))
  const parts: Array<string> = []
  const mode = weighted(rng, [[50, "sample"], [38, "values"], [12, "shape"]] as const)
  if (mode === "values" && names.length > 0) {
    for (let n = rng.chance(0.8) ? 1 : 2; n > 0; n--) {
      const name = rng.pick(names)
      query[name] = queryValueFor(rng, name, ctx, endpoint, labels)
    }
  }
  for (const [name, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) {
      parts.push(`${encodeComponent(name)}=${encodeComponent(String(v))}`)
    }
  }
  if (mode === "values" && names.length > 0 && rng.chance(0.2)) {
    const name = rng.pick(names)
    labels.push(`query ${name}: repeated`)
    parts.push(`${name}=1`, `${name}=2`)
  }
  if (mode === "shape" || (mode === "values" && names.length === 0)) {
    const h = rng.pick(hostileQueryShapes)
    labels.push(`query: ${h.name}`)
    parts.push(h.value)
  }
  return parts.length === 0 ? "" : `?${parts.join("&")}`
}

/** `productId` → `products`: the collection a field named after a record takes its ids from. */
const collectionOfField = (key: string): string | undefined =>
  key.endsWith("Id") ? `${key.slice(0, -2).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}s` : undefined

/**
 * Makes a sample plausible: a field gets an accepted value of the same name (an example) by chance, and a
 * uuid-shaped string becomes a real id, of the collection the field's name points to when there is one.
 */
const plausible = (
  rng: Rng,
  value: unknown,
  pool: IdPool,
  examples: FuzzContext["examples"],
  key?: string
): unknown => {
  const known = key === undefined ? undefined : examples.get(key)
  if (known !== undefined && rng.chance(0.6)) return structuredClone(rng.pick(known))
  if (typeof value === "string" && UUID.test(value) && rng.chance(0.75)) {
    const named = key === undefined ? undefined : collectionOfField(key)
    const ids = named !== undefined && pool.of(named).length > 0 ? pool.of(named) : pool.all()
    return ids.length > 0 ? rng.pick(ids) : value
  }
  if (Array.isArray(value)) return value.map((v) => plausible(rng, v, pool, examples, key))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plausible(rng, v, pool, examples, k)]))
  }
  return value
}

/** Every place a value could be replaced: [container, key] pairs, the root being `[holder, "root"]`. */
const placesIn = (holder: { root: unknown }): Array<readonly [Record<string | number, unknown>, string | number]> => {
  const out: Array<readonly [Record<string | number, unknown>, string | number]> = [[
    holder as Record<string, unknown>,
    "root"
  ]]
  const walk = (v: unknown) => {
    if (typeof v !== "object" || v === null || isRaw(v)) return
    for (const [k, child] of Object.entries(v)) {
      out.push([v as Record<string, unknown>, Array.isArray(v) ? Number(k) : k])
      walk(child)
    }
  }
  walk(holder.root)
  return out
}

const placeName = (key: string | number) => (key === "root" ? "body" : `body field ${JSON.stringify(key)}`)

const hostileValue = (
  rng: Rng
): Hostile<unknown> => (rng.chance(0.55) ? rng.pick(hostileStrings) : rng.pick(hostileJson))

const bodyText = (rng: Rng, endpoint: EndpointShape, ctx: FuzzContext, labels: Labels): string | undefined => {
  if (endpoint.payload === undefined) {
    if (endpoint.method === "GET" || !rng.chance(0.1)) return undefined
    labels.push("a body where none is expected")
    return toJsonText(hostileValue(rng).value)
  }
  const pool = endpoint.auth === "operator" ? ctx.operatorOwn : ctx.own
  const holder = { root: plausible(rng, rng.pick(ctx.samples(endpoint, "payload")), pool, ctx.examples) }
  const mode = weighted(rng, [[35, "sample"], [38, "fields"], [8, "whole"], [8, "malformed"], [11, "shape"]] as const)
  switch (mode) {
    case "sample":
      break
    case "fields": {
      // The places are those of the sample alone: walking into an inserted corpus value would edit the corpus.
      const all = placesIn(holder)
      const places = all.length > 1 ? all.slice(1) : all
      // Mostly one field, and mostly a string in a string's place: one bad value in an otherwise plausible body
      // gets past validation of the others, which is where the store and the rules beyond the schema are reached.
      for (let n = rng.chance(0.7) ? 1 : 2 + rng.int(2); n > 0; n--) {
        const [container, key] = rng.pick(places)
        const h = typeof container[key] === "string" && rng.chance(0.7) ? rng.pick(hostileStrings) : hostileValue(rng)
        labels.push(`${placeName(key)}: ${h.name}`)
        container[key] = h.value
      }
      break
    }
    case "whole": {
      const h = hostileValue(rng)
      labels.push(`body: ${h.name}`)
      holder.root = h.value
      break
    }
    case "malformed": {
      const h = rng.pick(malformedBodies)
      labels.push(`body: ${h.name}`)
      return h.value
    }
    case "shape": {
      const root = holder.root
      const alter = weighted(rng, [[1, "unknown"], [1, "nulls"], [1, "drop"], [1, "uuids"]] as const)
      if (typeof root !== "object" || root === null) break
      if (alter === "unknown") {
        labels.push("body: an unknown field")
        ;(root as Record<string, unknown>)["publised"] = true
      } else if (alter === "nulls") {
        labels.push("body: null in every field")
        for (const [container, key] of placesIn(holder).slice(1)) container[key] = null
      } else if (alter === "drop") {
        const keys = Object.keys(root)
        if (keys.length > 0) {
          const key = rng.pick(keys)
          labels.push(`body: ${key} left out`)
          delete (root as Record<string, unknown>)[key]
        }
      } else {
        labels.push("body: ids upper-cased, some of organization B")
        const other = ctx.other.all()
        holder.root = JSON.parse(JSON.stringify(root), (_, v) =>
          typeof v === "string" && UUID.test(v)
            ? (other.length > 0 && rng.chance(0.3) ? rng.pick(other) : v).toUpperCase()
            : v)
      }
      break
    }
  }
  return toJsonText(holder.root)
}

const OTHER_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

/** Request `index` for `endpoint`. */
export const generateRequest = (index: number, rng: Rng, endpoint: EndpointShape, ctx: FuzzContext): FuzzRequest => {
  const labels: Labels = []
  const cross = { used: false, ids: [] as Array<readonly [string, string]> }
  const sampledParams = endpoint.params === undefined
    ? {}
    : (rng.pick(ctx.samples(endpoint, "params")) as Record<string, unknown>)
  let path = endpoint.path
  for (const param of endpoint.pathParams) {
    path = path.replace(`:${param}`, pathValue(rng, endpoint, param, sampledParams[param], ctx, labels, cross))
  }
  const query = queryString(rng, endpoint, ctx, labels)
  const auth = endpoint.auth === "publishableKey" ? undefined : authorization(rng, endpoint, ctx, labels)
  let method = endpoint.method
  if (rng.chance(0.03)) {
    method = rng.pick(OTHER_METHODS.filter((m) => m !== endpoint.method))
    labels.push(`method ${method}`)
  }
  let body = method === "GET" ? undefined : bodyText(rng, endpoint, ctx, labels)
  const headers: Record<string, string> = {}
  if (auth !== undefined) headers["authorization"] = auth
  if (endpoint.auth === "publishableKey") Object.assign(headers, publishableKeyHeaders(rng, ctx, labels))
  if (body !== undefined) {
    const contentType = rng.chance(0.92) ? { name: "", value: "application/json" } : rng.pick(hostileContentTypes)
    if (contentType.name !== "") labels.push(`content-type: ${contentType.name}`)
    if (contentType.value !== undefined) headers["content-type"] = contentType.value
  }
  // An import job's file is no JSON body: its hostile rows come from a corpus of files of their own.
  if (endpoint.name === "importJobs.create" && method === "POST" && rng.chance(0.5)) {
    const file = rng.pick(hostileImportFiles)
    labels.push(`import file: ${file.name}`)
    body = file.value.body
    headers["content-type"] = file.value.contentType
  }
  if (method === "GET" || method === "OPTIONS") body = undefined
  const byA = headers["authorization"] === `Bearer ${ctx.keys.full}`
  const onlyUpperCased = labels.length > 0 && labels.every((l) => l.endsWith(": upper-case id"))
  return {
    index,
    endpoint,
    method,
    url: path + query,
    headers,
    body,
    labels,
    pathIds: cross.ids,
    crossOrganization: cross.used && labels.length === 1 && byA,
    lowerCaseTwin: method === "GET" && byA && onlyUpperCased ? path.toLowerCase() + query : undefined
  }
}
