/**
 * The shape of a JSON body, measured before it is parsed. `JSON.parse` is one synchronous call whose cost follows the
 * number of values, not the bytes: a 32 MiB import body of empty objects (ten million of them) holds the event loop
 * for seconds. So the raw bytes are scanned first, a slice at a time with a yield between slices, and a body that
 * nests too deep or holds too many values is refused before anything parses it (docs/SECURITY.md).
 *
 * It runs in the authentication middlewares, after the caller is known and charged: an anonymous client never makes
 * the server read its body.
 *
 * The limits sit far above any body this API accepts (10,000 import rows of a few dozen values each, objects of at
 * most a few dozen members) and far below what stalls the process.
 */
import { Kernel } from "@feedback/core"
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { type JsonScanLimit, type JsonScanLimits, scanJson, startScan } from "./JsonBytes.ts"

export const JSON_BODY_LIMITS = {
  /** Nesting of objects and arrays. */
  maxDepth: 64,
  /** Objects and arrays: each costs an allocation when parsed. */
  maxContainers: 200_000,
  /** Every value (scalars, objects, arrays, object members). */
  maxValues: 2_000_000,
  /**
   * Members of one object. The widest object a request may send is metadata (50 keys) or a filter (64 conditions);
   * no schema has more than a few dozen fields. Every unexpected key of a wider object would cost its parse, an
   * issue in the decoding and its conversion, so it is refused here first (docs/DECISIONS.md §79).
   */
  maxMembers: 1_000
} as const satisfies JsonScanLimits

export type JsonBodyProblem = JsonScanLimit

const SLICE = 1 << 20

/** Scans the whole body, yielding to the event loop after every MiB. */
export const scanJsonBody = (bytes: Uint8Array): Effect.Effect<JsonBodyProblem | undefined> =>
  Effect.gen(function*() {
    const state = startScan()
    for (let from = 0; from < bytes.length; from += SLICE) {
      const problem = scanJson(bytes, from, Math.min(bytes.length, from + SLICE), state, JSON_BODY_LIMITS, false)
      if (problem !== undefined) return problem
      if (from + SLICE < bytes.length) yield* Effect.yieldNow
    }
    return undefined
  })

const textEncoder = new TextEncoder()

/**
 * The shape of one short JSON text (an import file's row or cell, at most `MAX_ROW_BYTES`), measured at once: the
 * same limits as a body, so a value refused in a request body is refused inside an import file too.
 */
export const jsonTextProblem = (text: string): JsonBodyProblem | undefined => {
  const bytes = textEncoder.encode(text)
  return scanJson(bytes, 0, bytes.length, startScan(), JSON_BODY_LIMITS, false)
}

export const problemMessage: Readonly<Record<JsonBodyProblem, string>> = {
  depth: `nests objects and arrays deeper than ${JSON_BODY_LIMITS.maxDepth} levels`,
  containers: `holds more than ${JSON_BODY_LIMITS.maxContainers} objects and arrays`,
  values: `holds more than ${JSON_BODY_LIMITS.maxValues} values`,
  members: `has an object of more than ${JSON_BODY_LIMITS.maxMembers} members (no request object has that many fields)`
}

const bodyMethods = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** A body the JSON codec will parse (whether the media type is acceptable at all is the 415's concern, further in). */
/** Whether the request carries a JSON body `guardJsonBody` measures (a body method with a JSON media type). */
export const hasJsonBody = (request: HttpServerRequest.HttpServerRequest) => {
  if (!bodyMethods.has(request.method)) return false
  const type = request.headers["content-type"]?.split(";")[0]!.trim().toLowerCase()
  return type !== undefined &&
    (type === "application/json" || (type.startsWith("application/") && type.endsWith("+json")))
}

/**
 * Fails with a 400 naming `body` when the request's JSON body is too deep or holds too many values. The body read is
 * cached, so the API decodes these same bytes later; a body that cannot be read is left to the API, which meets the
 * same cached failure (413, 400).
 */
export const guardJsonBody: Effect.Effect<void, Kernel.InvalidRequest, HttpServerRequest.HttpServerRequest> = Effect
  .flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) =>
      !hasJsonBody(request) ? Effect.void : Effect.matchEffect(request.arrayBuffer, {
        onFailure: () => Effect.void,
        onSuccess: (buffer) =>
          Effect.flatMap(scanJsonBody(new Uint8Array(buffer)), (problem) =>
            problem === undefined ? Effect.void : Effect.fail(
              new Kernel.InvalidRequest({
                message: `The JSON body ${problemMessage[problem]}; send a smaller document.`,
                issues: [{ path: "body", message: problemMessage[problem] }]
              })
            ))
      })
  )
