/**
 * The memory store's write lock and an organization's long transaction (a strict import job, docs/FAIRNESS.md):
 * other organizations' transactions run between its steps, its own organization's wait for it to end, and when it
 * fails only what it wrote is undone.
 */
import { assert, it } from "@effect/vitest"
import { Kernel } from "@feedback/core"
import { Deferred, Effect, Exit, Fiber } from "effect"
import { MemoryDatabase } from "../src/kernel/MemoryDatabase.ts"

const A = "00000000-0000-4000-8000-00000000000a" as Kernel.OrganizationId
const B = "00000000-0000-4000-8000-00000000000b" as Kernel.OrganizationId

const as = (organizationId: Kernel.OrganizationId) => <X, E, R>(effect: Effect.Effect<X, E, R>) =>
  Effect.provideService(
    effect,
    Kernel.CurrentCaller,
    new Kernel.SecretKeyCaller({
      organizationId,
      keyId: "00000000-0000-4000-8000-0000000000aa" as Kernel.SecretKeyId,
      permissions: new Set()
    })
  )

/** A long transaction of A that writes `a1`, waits at a step boundary until `release`, writes `a2`, then `ending`. */
const longOfA = (ending: Effect.Effect<void, string>) =>
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const rows = db.table<string, string>("rows")
    const between = yield* Deferred.make<void>()
    const release = yield* Deferred.make<void>()
    const fiber = yield* Effect.forkChild(
      db.organizationTransaction(
        A,
        Effect.gen(function*() {
          yield* db.transaction(db.mutate(() => rows.set("a1", "A")))
          yield* Deferred.succeed(between, undefined)
          yield* Deferred.await(release)
          yield* db.transaction(db.mutate(() => rows.set("a2", "A")))
          yield* ending
        })
      ).pipe(as(A))
    )
    yield* Deferred.await(between)
    return { db, rows, fiber, release: Deferred.succeed(release, undefined) }
  })

it.effect("another organization's writes run between a long transaction's steps; its own wait for it to end", () =>
  Effect.gen(function*() {
    const { db, fiber, release, rows } = yield* longOfA(Effect.void)
    assert.isTrue(db.heldBack(A))
    // B writes while A's long transaction sits between steps: done at once, not after it.
    yield* db.mutate(() => rows.set("b1", "B")).pipe(as(B))
    assert.strictEqual(rows.get("b1"), "B")
    // A system write (no caller: a worker's claim) also runs.
    yield* db.mutate(() => rows.set("s1", "system"))
    // A's own write waits for the long transaction; B's, forked alongside it, is done meanwhile.
    const own = yield* Effect.forkChild(db.mutate(() => rows.set("a3", "A")).pipe(as(A)))
    const neighbour = yield* Effect.forkChild(db.mutate(() => rows.set("b2", "B")).pipe(as(B)))
    for (let i = 0; i < 20 && neighbour.pollUnsafe() === undefined; i++) yield* Effect.yieldNow
    assert.isDefined(neighbour.pollUnsafe(), "B's forked write is done")
    assert.isUndefined(own.pollUnsafe(), "A's own write waits")
    assert.isUndefined(rows.get("a3"))
    yield* release
    yield* Fiber.join(fiber)
    yield* Fiber.join(own)
    assert.deepStrictEqual([rows.get("a1"), rows.get("a2"), rows.get("a3")], ["A", "A", "A"])
    assert.isFalse(db.heldBack(A))
  }).pipe(Effect.provide(MemoryDatabase.layer)))

it.effect("a long transaction that fails undoes only its own writes, whatever ran between its steps", () =>
  Effect.gen(function*() {
    const { db, fiber, release, rows } = yield* longOfA(Effect.fail("row 3 cannot be imported"))
    yield* db.mutate(() => rows.set("b1", "B")).pipe(as(B))
    yield* release
    const exit = yield* Fiber.await(fiber)
    assert.isTrue(Exit.isFailure(exit))
    assert.deepStrictEqual([rows.get("a1"), rows.get("a2"), rows.get("b1")], [undefined, undefined, "B"])
    assert.isFalse(db.heldBack(A))
  }).pipe(Effect.provide(MemoryDatabase.layer)))
