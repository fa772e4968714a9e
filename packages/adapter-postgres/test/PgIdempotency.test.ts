/**
 * What only a server with two independent pools can show (docs/DECISIONS.md §18): an attempt whose claim another
 * process took over after the lease records nothing and rolls its effects back, so at most one attempt commits even
 * when a claimant outlives its lease. Two store instances ("processes") share one fresh database.
 */
import { assert, it } from "@effect/vitest"
import { Idempotency, Kernel, Organizations } from "@feedback/core"
import { recordEvent } from "@feedback/testing"
import { Effect, Exit, Layer, ManagedRuntime } from "effect"
import { PgStoreLayer } from "../src/PgStore.ts"
import { describeWithServer, freshServerDatabase } from "./TestDatabase.ts"

describeWithServer("idempotency keys across two pools", (serverUrl) => {
  it.effect(
    "an attempt that lost its claim after the lease rolls back; the one that took it over commits",
    () =>
      Effect.gen(function*() {
        const url = yield* freshServerDatabase(serverUrl)
        const instance = () =>
          ManagedRuntime.make(
            Layer.mergeAll(Idempotency.Idempotency.layer, Organizations.Organizations.layer).pipe(
              Layer.provideMerge(PgStoreLayer({ _tag: "Server", url, maxConnections: 2 })),
              Layer.provideMerge(Kernel.IdGenerator.uuidV7)
            )
          )
        const a = instance()
        const b = instance()
        yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([a.dispose(), b.dispose()])))
        const org = yield* Effect.promise(() =>
          a.runPromise(Organizations.Organizations.use((o) => o.createOrganization({ name: "Lease" })))
        )
        const request = { organizationId: org.id, key: "slow", fingerprint: "f" }
        const json = (body: unknown) =>
          Effect.succeed({ status: 201, contentType: "application/json", body: JSON.stringify(body) })

        // B, a lease later, takes the key over while A's operation is still inside its transaction.
        const takeOver = Effect.promise(() =>
          b.runPromise(Idempotency.IdempotencyRepository.use((s) => {
            const now = Date.now() + Idempotency.IDEMPOTENCY_LEASE_MS + 1_000
            return s.claim({
              ...request,
              token: "00000000-0000-4000-8000-0000000000bb",
              now: Kernel.Timestamp.fromMillis(now),
              leaseUntil: Kernel.Timestamp.fromMillis(now + Idempotency.IDEMPOTENCY_LEASE_MS),
              expiresAt: Kernel.Timestamp.fromMillis(now + Idempotency.IDEMPOTENCY_TTL_MS)
            })
          }))
        )
        const slow = Effect.gen(function*() {
          yield* recordEvent(org.id, "review.created", { by: "a" })
          assert.deepStrictEqual(yield* takeOver, { _tag: "Claimed" })
          return "a"
        })
        const exit = yield* Effect.promise(() =>
          a.runPromise(
            Effect.exit(Idempotency.Idempotency.use((i) => i.run(request, slow, { recordOf: () => json("a") })))
          )
        )
        assert.isTrue(Exit.isFailure(exit))
        assert.include(JSON.stringify(exit), "Conflict")
        const events = yield* Effect.promise(() =>
          a.runPromise(Kernel.EventOutbox.use((o) => o.listForOrganization(org.id)))
        )
        assert.deepStrictEqual(events, [])
        // B's claim holds: it records, and A could not.
        const recorded = yield* Effect.promise(() =>
          b.runPromise(Idempotency.IdempotencyRepository.use((s) =>
            s.complete(org.id, "slow", "00000000-0000-4000-8000-0000000000bb", {
              status: 201,
              contentType: null,
              body: ""
            })
          ))
        )
        assert.isTrue(recorded)
      }),
    { timeout: 60_000 }
  )
})
