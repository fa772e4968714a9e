/**
 * Calling the Admin API with the plain fetch client (`@feedback/client`): no Effect, types generated from the
 * server's OpenAPI document.
 *
 *   npm start        (prints a demo key)
 *   ADMIN_API_URL=http://127.0.0.1:3000 ADMIN_API_KEY=sk_… node examples/typed-client/fetch-client.ts
 */
import { createAdminApiClient } from "@feedback/client"

const client = createAdminApiClient({
  baseUrl: process.env["ADMIN_API_URL"] ?? "http://127.0.0.1:3000",
  secretKey: process.env["ADMIN_API_KEY"] ?? ""
})

const { data: organization, error, response } = await client.GET("/organization")
if (error !== undefined) {
  console.error(`${response.status} ${error.error.code}: ${error.error.message}`)
  process.exit(1)
}
console.log(`Organization ${organization.name}, ${organization.plan.apiRequestsPerMinute} requests/minute`)
const reviews = await client.GET("/reviews", { params: { query: { limit: 10, sort: "-rating" } } })
for (const review of reviews.data?.data ?? []) console.log(`${review.rating}★ ${review.title ?? ""}`)
