/**
 * Conformance of unsubscribing (shared DECISIONS §17; docs/EMAILS.md "Unsubscribe") on every store: one token per
 * customer, made once even when asked concurrently, found by itself alone; the opt-out recorded on the customer with
 * its event, once; tokens of the wrong form or unknown are NotFound; other customers and organizations untouched.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Catalog, CoreLayer, Kernel, Organizations, Setup } from "@feedback/core"
import { asDashboard } from "../CallerFixtures.ts"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { eventsOf } from "../TestTransactions.ts"

const BASE = "https://api.shop.example"
const TestConfig = Layer.succeed(Setup.SetupConfig, {
  embedScriptUrl: "https://cdn.example/embed.js",
  apiBaseUrl: `${BASE}/`,
  serverUrl: "http://127.0.0.1:3000"
})

const shop = (name: string) =>
  Effect.gen(function*() {
    const org = yield* Organizations.Organizations.use((o) => o.createOrganization({ name }))
    const as = asDashboard(org.id)
    const customer = (
      email: string,
      extra: { readonly emailOptOut?: boolean; readonly emailOptOutSource?: string } = {}
    ) => as(Catalog.Catalogs.use((c) => c.createCustomer({ email, firstName: "Ada", ...extra })))
    const getCustomer = (id: Kernel.CustomerId) => as(Catalog.Catalogs.use((c) => c.getCustomer(id)))
    return { org, customer, getCustomer }
  })

export const unsubscribeConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provide(TestConfig), Layer.provideMerge(store)), { timeout: 120_000 })(
    "unsubscribe",
    (it) => {
      it.effect("a customer has one token, made on first use and kept; its URL is under the public base URL", () =>
        Effect.gen(function*() {
          const { org, customer } = yield* shop("Tokens")
          const ada = yield* customer("ada@example.com")
          const grace = yield* customer("grace@example.com")
          const unsubscribes = yield* Catalog.Unsubscribes
          const token = yield* unsubscribes.tokenFor(org.id, ada.id)
          assert.isTrue(Catalog.isUnsubscribeToken(token))
          assert.strictEqual(yield* unsubscribes.tokenFor(org.id, ada.id), token)
          assert.strictEqual(yield* unsubscribes.urlFor(org.id, ada.id), `${BASE}/u/${token}`)
          assert.notStrictEqual(yield* unsubscribes.tokenFor(org.id, grace.id), token)
          // Asked concurrently for a customer without one: every caller gets the one token that was kept.
          const carol = yield* customer("carol@example.com")
          const tokens = yield* Effect.forEach(
            Array.from({ length: 8 }),
            () => unsubscribes.tokenFor(org.id, carol.id),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(new Set(tokens).size, 1)
          assert.strictEqual(yield* unsubscribes.tokenFor(org.id, carol.id), tokens[0])
          // Making a token is not a change to the customer: no event.
          assert.deepStrictEqual(
            (yield* eventsOf(org.id)).map((e) => e.event),
            ["customer.updated", "customer.updated", "customer.updated"]
          )
        }))

      it.effect("the page reads whose list and a masked address; the POST opts the customer out once, with customer.updated", () =>
        Effect.gen(function*() {
          const { org, customer, getCustomer } = yield* shop("Acme & Co")
          const ada = yield* customer("ada.lovelace@example.com")
          const unsubscribes = yield* Catalog.Unsubscribes
          const token = yield* unsubscribes.tokenFor(org.id, ada.id)
          assert.deepStrictEqual(yield* unsubscribes.describe(token), {
            organizationName: "Acme & Co",
            maskedEmail: "a***@example.com",
            optedOut: false
          })
          // Reading the page changes nothing.
          assert.deepStrictEqual(yield* getCustomer(ada.id), ada)
          const before = (yield* eventsOf(org.id)).length
          yield* TestClock.adjust("1 hour")
          const at = Kernel.Timestamp.fromMillis(3_600_000)
          assert.deepStrictEqual(yield* unsubscribes.unsubscribe(token), {
            organizationName: "Acme & Co",
            maskedEmail: "a***@example.com",
            optedOut: true
          })
          const optedOut = {
            ...ada,
            emailOptOut: true,
            emailOptOutAt: at,
            emailOptOutSource: "unsubscribe_link",
            updatedAt: at
          }
          assert.deepStrictEqual(yield* getCustomer(ada.id), optedOut)
          const events = (yield* eventsOf(org.id)).slice(before)
          assert.deepStrictEqual(events.map((e) => [e.event, e.data]), [["customer.updated", optedOut]])
          // A second POST (a mail client's one-click after the page's button) changes nothing and fires nothing.
          yield* TestClock.adjust("1 hour")
          assert.isTrue((yield* unsubscribes.unsubscribe(token)).optedOut)
          assert.deepStrictEqual(yield* getCustomer(ada.id), optedOut)
          assert.strictEqual((yield* eventsOf(org.id)).length, before + 1)
          assert.isTrue((yield* unsubscribes.describe(token)).optedOut)
        }))

      it.effect("a customer who opted out before keeps that opt-out; other customers and organizations are untouched", () =>
        Effect.gen(function*() {
          const { org, customer, getCustomer } = yield* shop("Kept")
          const other = yield* shop("Other shop")
          const earlier = yield* customer("earlier@example.com", { emailOptOut: true, emailOptOutSource: "import" })
          const bystander = yield* customer("bystander@example.com")
          const foreign = yield* other.customer("earlier@example.com")
          const unsubscribes = yield* Catalog.Unsubscribes
          const before = (yield* eventsOf(org.id)).length
          yield* TestClock.adjust("1 hour")
          assert.isTrue((yield* unsubscribes.unsubscribe(yield* unsubscribes.tokenFor(org.id, earlier.id))).optedOut)
          assert.deepStrictEqual(yield* getCustomer(earlier.id), earlier)
          assert.strictEqual((yield* eventsOf(org.id)).length, before)
          assert.isFalse((yield* getCustomer(bystander.id)).emailOptOut)
          assert.deepStrictEqual(yield* other.getCustomer(foreign.id), foreign)
          // A token names one customer of one organization.
          const foreignToken = yield* unsubscribes.tokenFor(other.org.id, foreign.id)
          assert.notStrictEqual(foreignToken, yield* unsubscribes.tokenFor(org.id, earlier.id))
          assert.strictEqual((yield* unsubscribes.describe(foreignToken)).organizationName, "Other shop")
        }))

      it.effect("tokens of the wrong form and tokens nobody has are the same NotFound, and change nothing", () =>
        Effect.gen(function*() {
          const { org, customer, getCustomer } = yield* shop("Unknown")
          const ada = yield* customer("ada@example.com")
          const unsubscribes = yield* Catalog.Unsubscribes
          const token = yield* unsubscribes.tokenFor(org.id, ada.id)
          const flipped = (token[0] === "A" ? "B" : "A") + token.slice(1)
          for (
            const bad of [
              "",
              "short",
              "x".repeat(65),
              `${token.slice(0, 30)}!${token.slice(31)}`,
              "../../etc/passwd-aaaaaaaaaaaaaa",
              flipped,
              "A".repeat(43),
              token.toLowerCase() === token ? token.toUpperCase() : token.toLowerCase()
            ]
          ) {
            for (const attempt of [unsubscribes.describe(bad), unsubscribes.unsubscribe(bad)]) {
              const error = yield* Effect.flip(attempt)
              assert.deepStrictEqual({ tag: error._tag, message: error.message }, {
                tag: "NotFound",
                message: "This unsubscribe link is not valid."
              })
            }
          }
          assert.deepStrictEqual(yield* getCustomer(ada.id), ada)
        }))
    }
  )
