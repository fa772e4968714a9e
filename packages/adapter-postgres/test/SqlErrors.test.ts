/**
 * The stores' safety net below validation: a value PostgreSQL refuses (NUL, an impossible date, a number out of
 * range, an unexpected unique clash, a row too large to index) is a `StoreRejection` carrying a tagged 400/409, not
 * a bare defect (a 500). Store methods are called directly with values that validation would have refused. Runs on
 * embedded PGlite, and on a PostgreSQL server with TEST_DATABASE_URL.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Kernel, Organizations, Webhooks } from "@feedback/core"
import { transactional } from "@feedback/testing"
import { Cause, Effect, Exit } from "effect"
import { SqlError, UnknownError } from "effect/sql/SqlError"
import { randomBytes, randomUUID } from "node:crypto"
import { PgStoreLayer } from "../src/PgStore.ts"
import { valueFaultOf } from "../src/kernel/SqlErrors.ts"
import { freshLayer, storeName } from "./TestDatabase.ts"

const at = "2026-01-31T12:00:00.000Z" as Kernel.Timestamp.Timestamp

const organization = (patch: Partial<Organizations.Organization> = {}): Organizations.Organization => ({
  id: randomUUID() as Kernel.OrganizationId,
  name: "Shop",
  plan: { apiRequestsPerMinute: 600 },
  createdAt: at,
  ...patch
})

/** The tagged error a store call is rejected with (via the boundary's recovery); fails the test on anything else. */
const rejected = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Kernel.recoverStoreRejection(effect))
    if (Exit.isSuccess(exit)) return assert.fail(`expected a rejection, got ${JSON.stringify(exit.value)}`)
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "None") return assert.fail(`expected a tagged error, got ${Cause.pretty(exit.cause)}`)
    return error.value
  })

const insertOrganization = (o: Organizations.Organization) =>
  Organizations.OrganizationRepository.use((r) => r.insert(o))

/** Stores a secret key of `org` (a random hash, no permissions), with `fields` changed. */
const insertSecretKey = (
  org: Organizations.Organization,
  fields: { readonly name: string; readonly keyHash?: string }
) =>
  Organizations.SecretKeyRepository.use((r) =>
    r.insert({
      id: randomUUID() as Kernel.SecretKeyId,
      organizationId: org.id,
      permissions: [],
      keyHash: randomBytes(32).toString("hex"),
      createdAt: at,
      revokedAt: null,
      ...fields
    })
  )

describe(`SQL errors caused by a value (${storeName})`, () => {
  layer(freshLayer(PgStoreLayer), { timeout: 60_000 })("store calls", (it) => {
    it.effect("a NUL character is a 400 (22021), in an organization name, a key name and a webhook secret", () =>
      Effect.gen(function*() {
        const nulName = yield* rejected(insertOrganization(organization({ name: "Sh\u0000op" })))
        assert.strictEqual(nulName._tag, "InvalidRequest")
        assert.include(nulName.message, "NUL")

        const org = organization()
        yield* insertOrganization(org)
        const keyName = yield* rejected(insertSecretKey(org, { name: "ci\u0000key" }))
        assert.strictEqual(keyName._tag, "InvalidRequest")

        const secret = yield* rejected(Webhooks.WebhookRepository.use((r) =>
          r.insert({
            id: randomUUID() as Kernel.WebhookId,
            organizationId: org.id,
            url: "https://example.com/hook",
            events: ["review.created"],
            hmacSecret: "0123456789abcdef\u0000",
            previousHmacSecret: null,
            previousSecretExpiresAt: null,
            createdAt: at,
            updatedAt: at
          })
        ))
        assert.strictEqual(secret._tag, "InvalidRequest")
      }))

    it.effect("an impossible or out-of-range instant is a 400 (22008 / 22007)", () =>
      Effect.gen(function*() {
        for (const createdAt of ["2026-02-30T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "not a time"]) {
          const error = yield* rejected(
            insertOrganization(organization({ createdAt: createdAt as Kernel.Timestamp.Timestamp }))
          )
          assert.strictEqual(error._tag, "InvalidRequest", createdAt)
          assert.include(error.message, "date or time", createdAt)
        }
      }))

    it.effect("a number out of the column's range is a 400 (22003)", () =>
      Effect.gen(function*() {
        const error = yield* rejected(insertOrganization(organization({ plan: { apiRequestsPerMinute: 1e12 } })))
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.include(error.message, "number")
      }))

    it.effect("a unique clash no use-case expected is a 409 (23505)", () =>
      Effect.gen(function*() {
        const org = organization()
        yield* insertOrganization(org)
        const error = yield* rejected(insertOrganization(org))
        assert.strictEqual(error._tag, "Conflict")
      }))

    it.effect("a check violation is a 400 (23514)", () =>
      Effect.gen(function*() {
        const error = yield* rejected(insertOrganization(organization({ plan: { apiRequestsPerMinute: 0 } })))
        assert.strictEqual(error._tag, "InvalidRequest")
      }))

    it.effect("a value too large to index is a 400 (54000), not a 500", () =>
      Effect.gen(function*() {
        const org = organization()
        yield* insertOrganization(org)
        // Random text does not compress, so the index entry exceeds a btree page's limit (about 2.7 kB).
        const error = yield* rejected(
          insertSecretKey(org, { name: "big", keyHash: randomBytes(8_000).toString("base64") })
        )
        assert.strictEqual(error._tag, "InvalidRequest")
        assert.include(error.message, "too large")
      }))

    it.effect("inside a unit of work the rejection rolls the work back and keeps its tagged error", () =>
      Effect.gen(function*() {
        const first = organization()
        const error = yield* rejected(transactional(Effect.gen(function*() {
          yield* insertOrganization(first)
          yield* insertOrganization(organization({ name: "bad\u0000" }))
        })))
        assert.strictEqual(error._tag, "InvalidRequest")
        const found = yield* Organizations.OrganizationRepository.use((r) => r.findById(first.id))
        assert.strictEqual(found._tag, "None")
      }))

    it.effect("reads with a value the column cannot hold are rejected, not defects", () =>
      Effect.gen(function*() {
        const error = yield* rejected(Organizations.SecretKeyRepository.use((r) => r.findByHash("a\u0000b")))
        assert.strictEqual(error._tag, "InvalidRequest")
      }))

    it.effect("instance secrets: the first value stored under a name is kept", () =>
      Effect.gen(function*() {
        const name = `test-${randomUUID()}`
        const first = yield* Kernel.InstanceSecretRepository.use((r) => r.getOrCreate(name, "a".repeat(43)))
        const second = yield* Kernel.InstanceSecretRepository.use((r) => r.getOrCreate(name, "b".repeat(43)))
        assert.strictEqual(first, "a".repeat(43))
        assert.strictEqual(second, first)
      }))
  })

  it("errors that are not about the value stay defects (no SQLSTATE, a connection failure, a syntax error)", () => {
    const withCode = (code: string | undefined) =>
      new SqlError({
        reason: new UnknownError({ cause: Object.assign(new Error("x"), code === undefined ? {} : { code }) })
      })
    assert.isUndefined(valueFaultOf(withCode(undefined)))
    assert.isUndefined(valueFaultOf(withCode("08006")))
    assert.isUndefined(valueFaultOf(withCode("42601")))
    assert.isUndefined(valueFaultOf(withCode("23503"))) // a foreign key: a use-case missed a rule
    assert.isUndefined(valueFaultOf(withCode("40001")))
    assert.strictEqual(valueFaultOf(withCode("22P05"))?._tag, "InvalidRequest")
    assert.strictEqual(valueFaultOf(withCode("22012"))?._tag, "InvalidRequest") // any other data exception
    assert.strictEqual(valueFaultOf(withCode("54001"))?._tag, "InvalidRequest")
    assert.strictEqual(valueFaultOf(withCode("23505"))?._tag, "Conflict")
  })
})
