/**
 * A large JSON body parsed without holding the event loop. `JSON.parse` is one synchronous call: a 32 MiB import body
 * keeps every other request (`/health` too) waiting while it runs. Here a container larger than a slice is split at
 * its own top-level commas: runs of members that fit a slice are parsed by one `JSON.parse` call, a larger member is
 * split again, and the fiber yields after every slice's worth of bytes. The value is the one `JSON.parse` gives the whole text (the
 * last of duplicate keys, `__proto__` an ordinary key), and a text `JSON.parse` refuses is refused
 * (docs/DECISIONS.md §69).
 *
 * The body's shape was measured first (`JsonBodyShape`): its depth is bounded, so the splitting goes at most that deep.
 */
import { AdminApi } from "@feedback/client/effect"
import { Kernel } from "@feedback/core"
import { Context, Effect, Result, Schema, SchemaIssue } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApi } from "effect/http-api"
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  isSpace,
  type JsonScan,
  NO_LIMITS,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  scanJson,
  startScan
} from "./JsonBytes.ts"

/** A member at most this large is parsed in one call; the fiber yields after about this many bytes. */
export const JSON_SLICE_BYTES = 256 * 1024

/** Slices never start inside a character (they start at ASCII punctuation), and a BOM inside is kept, as invalid. */
const sliceDecoder = new TextDecoder("utf-8", { ignoreBOM: true })
/** The whole body is decoded as the framework decodes it: a leading BOM dropped. */
const bodyDecoder = new TextDecoder("utf-8")

class Invalid extends SyntaxError {}
const invalid = (at: number) => new Invalid(`Unexpected token in JSON at byte ${at}`)

/** `JSON.parse` of `prefix + bytes[from, to) + suffix`, its refusal a failure. */
const parseSlice = (
  bytes: Uint8Array,
  from: number,
  to: number,
  prefix = "",
  suffix = ""
): Effect.Effect<unknown, SyntaxError> =>
  Effect.try({
    try: () => JSON.parse(prefix + sliceDecoder.decode(bytes.subarray(from, to)) + suffix),
    catch: (e) => e instanceof SyntaxError ? e : invalid(from)
  })

interface Cursor {
  at: number
  /** Bytes left before the next yield. */
  budget: number
}

const skipSpace = (bytes: Uint8Array, c: Cursor, to: number) => {
  while (c.at < to && isSpace(bytes[c.at]!)) c.at++
}

/** The end of the string starting at `from` (after its closing quote), or -1. */
const stringEnd = (bytes: Uint8Array, from: number, to: number): number => {
  let escaped = false
  for (let i = from + 1; i < to; i++) {
    const b = bytes[i]!
    if (escaped) escaped = false
    else if (b === BACKSLASH) escaped = true
    else if (b === QUOTE) return i + 1
  }
  return -1
}

/**
 * Looks at most `limit` bytes ahead from `from`, inside a container, at depth 0: where its last member separator
 * (comma) is, and where the container closes if it closes that soon.
 */
const lookAhead = (bytes: Uint8Array, from: number, to: number, limit: number): JsonScan => {
  const scan = startScan()
  scanJson(bytes, from, Math.min(to, from + limit), scan, NO_LIMITS, true)
  return scan
}

/** One value from `c.at`: in one call when it ends within a slice, else member by member. */
const parseValue = (
  bytes: Uint8Array,
  c: Cursor,
  to: number,
  sliceBytes: number
): Effect.Effect<unknown, SyntaxError> =>
  Effect.suspend(() => {
    skipSpace(bytes, c, to)
    const from = c.at
    const first = bytes[from]
    if (first === OPEN_ARRAY || first === OPEN_OBJECT) {
      const { close } = lookAhead(bytes, from + 1, to, sliceBytes)
      if (close === -1) return parseContainer(bytes, c, to, sliceBytes)
      c.at = close + 1
      c.budget -= c.at - from
      return parseSlice(bytes, from, c.at)
    }
    // A scalar, however long (one long string is one call: nothing to split).
    let end = from
    if (first === QUOTE) end = stringEnd(bytes, from, to)
    else {
      while (
        end < to && !isSpace(bytes[end]!) && bytes[end] !== COMMA && bytes[end] !== CLOSE_ARRAY &&
        bytes[end] !== CLOSE_OBJECT
      ) end++
    }
    if (end === -1 || end === from) return Effect.fail(invalid(from))
    c.at = end
    c.budget -= end - from
    return parseSlice(bytes, from, end)
  })

/** A container too large for one call: runs of members that fit a slice parsed together, larger members alone. */
const parseContainer = (
  bytes: Uint8Array,
  c: Cursor,
  to: number,
  sliceBytes: number
): Effect.Effect<unknown, SyntaxError> =>
  Effect.gen(function*() {
    const isObject = bytes[c.at] === OPEN_OBJECT
    const [open, close, closeByte] = isObject ? ["{", "}", CLOSE_OBJECT] : ["[", "]", CLOSE_ARRAY]
    const array: Array<unknown> = []
    const object: Record<string, unknown> = {}
    // As JSON.parse does: own properties even for `__proto__`, the last of duplicate keys winning in place.
    const assign = (source: object) => {
      for (const key of Object.keys(source)) {
        Object.defineProperty(object, key, {
          value: (source as Record<string, unknown>)[key],
          writable: true,
          enumerable: true,
          configurable: true
        })
      }
    }
    c.at++
    skipSpace(bytes, c, to)
    if (bytes[c.at] === closeByte) {
      c.at++
      return isObject ? object : array
    }
    while (true) {
      if (c.budget <= 0) {
        c.budget = sliceBytes
        yield* Effect.yieldNow
      }
      const from = c.at
      const ahead = lookAhead(bytes, from, to, sliceBytes)
      // The rest of the container, or the members up to the last separator, fit a slice: one call for them all.
      const end = ahead.close !== -1 ? ahead.close : ahead.lastComma
      if (end !== -1 && !bytes.subarray(from, end).every(isSpace)) {
        const run = yield* parseSlice(bytes, from, end, open, close)
        if (isObject) assign(run as object)
        else for (const value of run as Array<unknown>) array.push(value)
        c.at = end + 1
        c.budget -= end - from
        if (ahead.close !== -1) return isObject ? object : array
        continue
      }
      // One member larger than a slice.
      if (isObject) {
        skipSpace(bytes, c, to)
        const keyEnd = bytes[c.at] === QUOTE ? stringEnd(bytes, c.at, to) : -1
        if (keyEnd === -1) return yield* Effect.fail(invalid(c.at))
        const key = (yield* parseSlice(bytes, c.at, keyEnd)) as string
        c.at = keyEnd
        skipSpace(bytes, c, to)
        if (bytes[c.at] !== COLON) return yield* Effect.fail(invalid(c.at))
        c.at++
        assign({ [key]: yield* parseValue(bytes, c, to, sliceBytes) })
      } else {
        array.push(yield* parseValue(bytes, c, to, sliceBytes))
      }
      skipSpace(bytes, c, to)
      const next = bytes[c.at]
      c.at++
      if (next === closeByte) return isObject ? object : array
      if (next !== COMMA) return yield* Effect.fail(invalid(c.at - 1))
    }
  })

/**
 * The JSON value of a body, as `JSON.parse` of its text would give it; `undefined` for an empty body (as the
 * framework reads one). Small bodies are parsed at once.
 */
export const parseJsonBody = (
  bytes: Uint8Array,
  sliceBytes: number = JSON_SLICE_BYTES
): Effect.Effect<unknown, SyntaxError> =>
  Effect.suspend(() => {
    if (bytes.length <= sliceBytes) {
      const text = bodyDecoder.decode(bytes)
      return text === "" ? Effect.succeed(undefined) : Effect.try({
        try: () => JSON.parse(text),
        catch: (e) => e instanceof SyntaxError ? e : invalid(0)
      })
    }
    const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
    const c: Cursor = { at: bom, budget: sliceBytes }
    return Effect.flatMap(parseValue(bytes, c, bytes.length, sliceBytes), (value) => {
      skipSpace(bytes, c, bytes.length)
      return c.at === bytes.length ? Effect.succeed(value) : Effect.fail(invalid(c.at))
    })
  })

const payloadParseOptions = Context.getOrUndefined(AdminApi.annotations, HttpApi.PayloadParseOptions) ??
  { onExcessProperty: "error", errors: "all" }

/** Rows of an import body decoded at once; the fiber yields between such runs. */
export const ROWS_PER_SLICE = 500

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)
const rowPath = /^body\.data\[(\d+)\]/

/**
 * Decodes `value` by `schema`; a body of many `data` rows (a bulk import) a run of rows at a time. Its outer shape is
 * decoded first by the schema's encoded side, which counts the rows without decoding them (`BoundedArray`), then each
 * run of rows with the rest of the body; the issues of every run are gathered, numbered by the whole body's rows.
 */
export const decodeInSlices = <S extends Schema.Top>(schema: S) => {
  const decode = Schema.decodeUnknownEffect(schema, payloadParseOptions)
  const decodeOuter = Schema.decodeUnknownEffect(Schema.toEncoded(schema), payloadParseOptions)
  const invalid = (error: Schema.SchemaError) => Kernel.invalidRequestOfSchema("body", error)
  return (value: unknown): Effect.Effect<S["Type"], Kernel.InvalidRequest, S["DecodingServices"]> => {
    const rows = isRecord(value) ? value["data"] : undefined
    if (!isRecord(value) || !Array.isArray(rows) || rows.length <= ROWS_PER_SLICE) {
      return Effect.mapError(decode(value), invalid)
    }
    return Effect.gen(function*() {
      yield* Effect.mapError(decodeOuter(value), invalid)
      const issues: Array<Kernel.RequestIssue> = []
      let total = 0
      let decoded: Record<string, unknown> | undefined
      const data: Array<unknown> = []
      for (let from = 0; from < rows.length; from += ROWS_PER_SLICE) {
        yield* Effect.yieldNow
        const slice = yield* Effect.result(decode({ ...value, data: rows.slice(from, from + ROWS_PER_SLICE) }))
        if (Result.isSuccess(slice)) {
          decoded ??= slice.success as Record<string, unknown>
          for (const row of (slice.success as { readonly data: ReadonlyArray<unknown> }).data) data.push(row)
          continue
        }
        const found = Kernel.requestIssuesOf("body", slice.failure)
        total += found.total
        for (const issue of found.issues) {
          if (issues.length >= Kernel.MAX_REQUEST_ISSUES) break
          const path = issue.path.replace(rowPath, (_, i: string) => `body.data[${Number(i) + from}]`)
          issues.push({ ...issue, path })
        }
      }
      if (total > 0) return yield* Effect.fail(Kernel.InvalidRequest.of(issues, total))
      return { ...decoded, data } as S["Type"]
    })
  }
}

/**
 * The request's JSON body decoded by `schema` as HttpApi decodes a payload (the API's parse options, the same 400s),
 * but parsed with `parseJsonBody` and a bulk import's rows decoded a run at a time: for the routes whose bodies may
 * be large (the bulk imports), registered with `handleRaw`. A body that cannot be read fails as it does there.
 */
export const decodeJsonBody = <S extends Schema.Top>(
  schema: S
): Effect.Effect<S["Type"], Kernel.InvalidRequest, S["DecodingServices"] | HttpServerRequest.HttpServerRequest> => {
  const decode = decodeInSlices(schema)
  return HttpServerRequest.HttpServerRequest.pipe(
    Effect.flatMap((request) => Effect.orDie(request.arrayBuffer)),
    Effect.flatMap((buffer) =>
      parseJsonBody(new Uint8Array(buffer)).pipe(
        Effect.mapError(() =>
          Kernel.invalidRequestOfSchema(
            "body",
            new Schema.SchemaError(new SchemaIssue.InvalidValue({ message: "Expected a valid JSON body" }))
          )
        ),
        Effect.flatMap(decode)
      )
    )
  )
}
