/**
 * Idempotency keys (docs/DECISIONS.md §18), the behaviour every store shows through `Idempotency.run`: one run per
 * key, replays of the recorded outcome, reuse and in-progress refusals, the response committing with the
 * operation's effects, takeover after the lease, erasure reaching recorded responses, and bounded purging. Time is
 * the test's `TestClock`; each test uses organizations of its own.
 */
import { assert, layer } from "@effect/vitest"
import { Clock, Effect, Exit, Layer } from "effect"
import { TestClock } from "effect/testing"
import { CoreLayer, Idempotency, Kernel, Organizations } from "@feedback/core"
import type { ConformanceSuite } from "../ConformanceSuite.ts"
import { StoreTestKit } from "../StoreTestKit.ts"
import { eventsOf, recordEvent } from "../TestTransactions.ts"

const { fromMillis } = Kernel.Timestamp

const json = (status: number, body: unknown): Idempotency.StoredResponse => ({
  status,
  contentType: "application/json",
  body: JSON.stringify(body)
})

/** Records a success as 201 with the value as body, NotFound as 404, anything else not at all. */
const recordOf: Idempotency.IdempotentOptions<unknown, unknown>["recordOf"] = (exit) =>
  Effect.succeed(
    Exit.isSuccess(exit)
      ? json(201, exit.value)
      : Exit.findErrorOption(exit).pipe((e) =>
        e._tag === "Some" && e.value instanceof Kernel.NotFound ? json(404, { error: "NOT_FOUND" }) : undefined
      )
  )

const run = <A, E, R>(organizationId: string, key: string, operation: Effect.Effect<A, E, R>, fingerprint = "f1") =>
  Idempotency.Idempotency.use((i) => i.run({ organizationId, key, fingerprint }, operation, { recordOf }))

export const idempotencyConformance: ConformanceSuite = (store) =>
  layer(CoreLayer.pipe(Layer.provideMerge(store)), { timeout: 60_000 })("idempotency keys", (it) => {
    const organization = Organizations.Organizations.use((o) => o.createOrganization({ name: "Idem" }))
    /** An operation with an effect to count: one event per run. */
    const write = (organizationId: Kernel.OrganizationId, n: number) =>
      Effect.as(recordEvent(organizationId, "review.created", { n }), { n })

    it.effect("runs once per key; a repeat replays the recorded response; another request is refused", () =>
      Effect.gen(function*() {
        const org = yield* organization
        const first = yield* run(org.id, "k", write(org.id, 1))
        assert.deepStrictEqual(first, { _tag: "Ran", value: { n: 1 } })
        const again = yield* run(org.id, "k", write(org.id, 2))
        assert.deepStrictEqual(again, { _tag: "Replayed", response: json(201, { n: 1 }) })
        assert.strictEqual((yield* eventsOf(org.id)).length, 1)
        const reused = yield* Effect.flip(run(org.id, "k", write(org.id, 3), "f2"))
        assert.strictEqual(reused._tag, "IdempotencyKeyReused")
        // Keys are per organization.
        const other = yield* organization
        assert.strictEqual((yield* run(other.id, "k", write(other.id, 4), "f2"))._tag, "Ran")
        assert.strictEqual((yield* eventsOf(org.id)).length, 1)
      }))

    it.effect("the response commits with the operation's effects: a recording that fails undoes them and frees the key", () =>
      Effect.gen(function*() {
        const org = yield* organization
        const exit = yield* Effect.exit(
          Idempotency.Idempotency.use((i) =>
            i.run({ organizationId: org.id, key: "k", fingerprint: "f" }, write(org.id, 1), {
              recordOf: () => Effect.die("disk full")
            })
          )
        )
        assert.isTrue(Exit.isFailure(exit))
        assert.deepStrictEqual(yield* eventsOf(org.id), [])
        assert.strictEqual((yield* run(org.id, "k", write(org.id, 2), "f"))._tag, "Ran")
        assert.strictEqual((yield* eventsOf(org.id)).length, 1)
      }))

    it.effect("an outcome the operation decided is recorded; others leave the key free for a retry", () =>
      Effect.gen(function*() {
        const org = yield* organization
        const missing = yield* Effect.flip(run(org.id, "gone", Effect.fail(Kernel.NotFound.of("thing", "x"))))
        assert.strictEqual(missing._tag, "NotFound")
        assert.deepStrictEqual(yield* run(org.id, "gone", write(org.id, 1)), {
          _tag: "Replayed",
          response: json(404, { error: "NOT_FOUND" })
        })
        const invalid = yield* Effect.flip(run(org.id, "bad", Effect.fail(Kernel.InvalidRequest.single("body", "no"))))
        assert.strictEqual(invalid._tag, "InvalidRequest")
        yield* Effect.exit(run(org.id, "bad", Effect.die("crash")))
        assert.deepStrictEqual(yield* run(org.id, "bad", write(org.id, 2)), { _tag: "Ran", value: { n: 2 } })
        assert.strictEqual((yield* eventsOf(org.id)).length, 1)
        // A success with nothing to record (say, a streamed body) runs and leaves the key free too.
        const unrecorded = Idempotency.Idempotency.use((i) =>
          i.run({ organizationId: org.id, key: "stream", fingerprint: "f" }, write(org.id, 3), {
            recordOf: () => Effect.succeed(undefined)
          })
        )
        assert.strictEqual((yield* unrecorded)._tag, "Ran")
        assert.strictEqual((yield* unrecorded)._tag, "Ran")
        assert.strictEqual((yield* eventsOf(org.id)).length, 3)
      }))

    it.effect("a key claimed and still running is 409; past its lease another request takes it over", () =>
      Effect.gen(function*() {
        const org = yield* organization
        const now = yield* Clock.currentTimeMillis
        const claimed = yield* Idempotency.IdempotencyRepository.use((s) =>
          s.claim({
            organizationId: org.id,
            key: "busy",
            fingerprint: "f1",
            token: "00000000-0000-4000-8000-0000000000aa",
            now: fromMillis(now),
            leaseUntil: fromMillis(now + Idempotency.IDEMPOTENCY_LEASE_MS),
            expiresAt: fromMillis(now + Idempotency.IDEMPOTENCY_TTL_MS)
          })
        )
        assert.deepStrictEqual(claimed, { _tag: "Claimed" })
        const busy = yield* Effect.flip(run(org.id, "busy", write(org.id, 1)))
        assert.strictEqual(busy._tag, "Conflict")
        assert.strictEqual(
          (yield* Effect.flip(run(org.id, "busy", write(org.id, 1), "f2")))._tag,
          "IdempotencyKeyReused"
        )
        yield* TestClock.adjust(Idempotency.IDEMPOTENCY_LEASE_MS)
        assert.deepStrictEqual(yield* run(org.id, "busy", write(org.id, 2)), { _tag: "Ran", value: { n: 2 } })
        // The first attempt lost its claim: it can record nothing.
        const late = yield* Idempotency.IdempotencyRepository.use((s) =>
          s.complete(org.id, "busy", "00000000-0000-4000-8000-0000000000aa", json(201, {}))
        )
        assert.isFalse(late)
        assert.strictEqual((yield* eventsOf(org.id)).length, 1)
      }))

    it.effect("concurrent runs of one key: exactly one runs, the others replay it or are told it runs", () =>
      Effect.gen(function*() {
        const org = yield* organization
        const results = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) => Effect.exit(run(org.id, "race", write(org.id, i)))),
          { concurrency: "unbounded" }
        )
        const ran = results.filter((r) => Exit.isSuccess(r) && r.value._tag === "Ran")
        assert.strictEqual(ran.length, 1)
        for (const r of results) {
          if (Exit.isFailure(r)) {
            assert.strictEqual(
              Exit.findErrorOption(r).pipe((e) => e._tag === "Some" ? (e.value as { _tag: string })._tag : ""),
              "Conflict"
            )
          }
        }
        assert.strictEqual((yield* eventsOf(org.id)).length, 1)
      }))

    it.effect("after 24 hours a key is free again", () =>
      Effect.gen(function*() {
        const org = yield* organization
        yield* run(org.id, "day", write(org.id, 1))
        yield* TestClock.adjust(Idempotency.IDEMPOTENCY_TTL_MS - 1)
        assert.strictEqual(
          (yield* Effect.flip(run(org.id, "day", write(org.id, 2), "f2")))._tag,
          "IdempotencyKeyReused"
        )
        yield* TestClock.adjust(1)
        assert.deepStrictEqual(yield* run(org.id, "day", write(org.id, 3), "f2"), { _tag: "Ran", value: { n: 3 } })
      }))

    it.effect("erasing a record blanks its fields in recorded responses, the erasing request's own included", () =>
      Effect.gen(function*() {
        const org = yield* organization
        const email = `erase-${org.id}@example.com`
        const id = "00000000-0000-4000-8000-0000000000e1"
        const question = { id, body: "Is it blue?", askerEmail: email }
        yield* run(org.id, "create", Effect.succeed(question))
        yield* run(
          org.id,
          "unrelated",
          Effect.succeed({ id: "00000000-0000-4000-8000-0000000000e2", askerEmail: email })
        )
        const store = yield* Idempotency.IdempotencyRepository
        const erase = Idempotency.eraseFromRecordedResponses(store, org.id, {
          resource: "productQuestion",
          recordId: id,
          fields: ["askerEmail"]
        })
        const deleted = yield* run(org.id, "delete", Effect.as(erase, question))
        assert.deepStrictEqual(deleted, { _tag: "Ran", value: question })
        const blank = json(201, { ...question, askerEmail: null })
        assert.deepStrictEqual(yield* run(org.id, "create", Effect.void), { _tag: "Replayed", response: blank })
        assert.deepStrictEqual(yield* run(org.id, "delete", Effect.void), { _tag: "Replayed", response: blank })
        // Another record's response keeps its fields.
        const kept = yield* run(org.id, "unrelated", Effect.void)
        assert.isTrue(kept._tag === "Replayed" && kept.response.body.includes(email))
        // The unrelated record's response is the one stored copy left.
        assert.deepStrictEqual(yield* StoreTestKit.use((s) => s.tablesContaining(email)), ["idempotency_keys"])
      }))

    it.effect("expired keys are purged in bounded batches; live ones stay", () =>
      Effect.gen(function*() {
        const org = yield* organization
        const purge = (limit: number) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Idempotency.IdempotencyRepository.use((s) => s.purgeExpired(fromMillis(now), limit)))
        // Past what earlier tests left behind (each test's clock starts at 0), which is purged first.
        yield* TestClock.adjust("10 days")
        while ((yield* purge(1_000)) > 0) {
          /* drained */
        }
        for (const key of ["a", "b", "c"]) {
          yield* run(org.id, key, Effect.succeed(key))
        }
        assert.strictEqual(yield* purge(10), 0)
        yield* TestClock.adjust(Idempotency.IDEMPOTENCY_TTL_MS)
        yield* run(org.id, "fresh", Effect.succeed("fresh"))
        assert.strictEqual(yield* purge(2), 2)
        assert.strictEqual(yield* purge(2), 1)
        assert.strictEqual(yield* purge(2), 0)
        assert.deepStrictEqual(yield* run(org.id, "fresh", Effect.void), {
          _tag: "Replayed",
          response: json(201, "fresh")
        })
      }))
  })
