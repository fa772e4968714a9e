/**
 * Calling the Admin API with the typed client generated from its contract.
 *
 *   npm start        (prints a demo key)
 *   ADMIN_API_URL=http://127.0.0.1:3000 ADMIN_API_KEY=sk_… node examples/typed-client/main.ts
 */
import { AdminClient, AdminClientLayer } from "@feedback/client/effect"
import { Effect } from "effect"

const program = Effect.gen(function*() {
  const client = yield* AdminClient
  const organization = yield* client.organization.get()
  yield* Effect.log(
    `Organization ${organization.name} (${organization.id}), ${organization.plan.apiRequestsPerMinute} requests/minute`
  )
  // Query parameters are typed: `limit` a number, `sort` one of the list's values, `include` a list of its extras.
  const reviews = yield* client.reviewsRead.list({ query: { limit: 10, sort: "-rating", include: ["product"] } })
  for (const review of reviews.data) {
    yield* Effect.log(`${review.rating}★ ${review.product?.title ?? review.productId}: ${review.title ?? ""}`)
  }
}).pipe(
  // Errors arrive as the core's tagged errors.
  Effect.catchTag("Unauthorized", (e) => Effect.logError(`Check ADMIN_API_KEY: ${e.message}`)),
  Effect.catchTag("TooManyRequests", (e) => Effect.logError(`Rate limited; retry in ${e.retryAfterSeconds ?? "?"} s`))
)

Effect.runPromise(program.pipe(Effect.provide(AdminClientLayer({
  baseUrl: process.env["ADMIN_API_URL"] ?? "http://127.0.0.1:3000",
  secretKey: process.env["ADMIN_API_KEY"] ?? ""
}))))
