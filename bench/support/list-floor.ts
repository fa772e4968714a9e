/**
 * The floor of a list request on this stack, for `bench reviews-list`: the least an Effect HttpApi endpoint does to
 * answer `GET /reviews` — one endpoint with its query as strings, no middleware, no error envelope, the bearer key
 * hashed and found in a Map — then the statements the request cannot do without, and `JSON.stringify` of what they
 * read. Two variants: without the rate limit ("floor"), and with the organization's spend overlapped with the read
 * as docs/DECISIONS.md §28 does ("floor + spend": the limiter's state is shared across processes, so on PostgreSQL
 * it is a statement). What the real route costs beyond these is ours; what they cost beyond the page statement is
 * the framework's and the design's.
 */
import { type Kernel, RateLimits, Reviews, type StoreServices } from "@feedback/core"
import { Effect, type Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { HttpServerRequest } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiError, HttpApiGroup } from "effect/http-api"
import { createHash } from "node:crypto"
import { floorWebHandler, jsonResponse } from "./floor-handler.ts"

const optional = Schema.optional(Schema.String)

class FloorApi extends HttpApi.make("listFloor").add(
  HttpApiGroup.make("reviews").add(
    HttpApiEndpoint.get("list", "/reviews", {
      query: { limit: optional, cursor: optional, filter: optional, search: optional, include: optional },
      success: Schema.Unknown,
      error: HttpApiError.Unauthorized
    })
  )
) {}

export interface ListFloorOptions {
  readonly secretKey: string
  readonly organizationId: Kernel.OrganizationId
  readonly plan: Parameters<typeof RateLimits.bucketsForKey>[1]
  /** The list request the query stands for (the real route's parsing, cursor MACs included). */
  readonly parse: (query: Record<string, string | undefined>) => Kernel.ListRequest<Reviews.ReviewInclude>
  /** The statements the request cannot do without, answering what is written as its JSON. */
  readonly read: (
    request: Kernel.ListRequest<Reviews.ReviewInclude>
  ) => Effect.Effect<unknown, never, SqlClient.SqlClient | Reviews.ReviewRepository>
  readonly spend: boolean
}

export const makeListFloor = (
  services: Layer.Layer<StoreServices | SqlClient.SqlClient>,
  options: ListFloorOptions
) => {
  const byHash = new Map([[createHash("sha256").update(options.secretKey).digest("hex"), options.organizationId]])
  const listKey = RateLimits.endpointKey("GET", "/reviews")
  const buckets = RateLimits.bucketsForKey(listKey, options.plan)
  const cost = RateLimits.costOfKey(listKey)

  const Handlers = HttpApiBuilder.group(
    FloorApi,
    "reviews",
    (handlers) =>
      handlers.handle("list", ({ query }) =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const auth = request.headers["authorization"] ?? ""
          const organizationId = auth.startsWith("Bearer ")
            ? byHash.get(createHash("sha256").update(auth.slice(7)).digest("hex"))
            : undefined
          if (organizationId === undefined) return yield* new HttpApiError.Unauthorized()
          const read = options.read(options.parse(query))
          const body = options.spend
            ? yield* Effect.map(
              Effect.all([RateLimits.RateLimitRepository.use((r) => r.spend(organizationId, buckets, cost)), read], {
                concurrency: 2
              }),
              ([decision, rows]) => {
                if (decision._tag !== "Admitted") throw new Error("the benchmark's organization was refused")
                return rows
              }
            )
            : yield* read
          return jsonResponse(body)
        }))
  )

  return floorWebHandler(FloorApi, Handlers, services)
}
