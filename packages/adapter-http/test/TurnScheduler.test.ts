/**
 * The server's fiber scheduler (`TurnScheduler`): every fiber's yields wait in one queue, in arrival order within a
 * priority and lower priorities first, and a turn of the event loop ends once its budget is spent, so a callback the
 * loop was given meanwhile (a socket's data) runs between two fibers' steps instead of after all of them. A budget of
 * zero makes every turn one step long, so the tests need no clock.
 */
import { Effect, Fiber, Scheduler } from "effect"
import { describe, expect, it } from "vitest"
import { TurnScheduler } from "../src/server/TurnScheduler.ts"

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve))

describe("TurnScheduler", () => {
  it("runs queued steps in arrival order, lower priorities first, and flushes them all", () => {
    const queue = new TurnScheduler(0).makeDispatcher()
    const ran: Array<string> = []
    queue.scheduleTask(() => ran.push("a"), 0)
    queue.scheduleTask(() => ran.push("late"), 1)
    queue.scheduleTask(() => ran.push("b"), 0)
    queue.scheduleTask(() => ran.push("first"), -1)
    queue.flush()
    expect(ran).toEqual(["first", "a", "b", "late"])
  })

  it("ends a turn at its budget: a callback queued meanwhile runs before the next step", async () => {
    const queue = new TurnScheduler(0).makeDispatcher()
    const ran: Array<string> = []
    for (const step of ["a", "b", "c"]) queue.scheduleTask(() => ran.push(step), 0)
    // Queued after the queue asked for its turn, as a socket's data would arrive while fibers wait.
    setImmediate(() => ran.push("io"))
    while (ran.length < 4) await immediate()
    expect(ran).toEqual(["a", "io", "b", "c"])
  })

  it("every fiber shares the one queue: fibers that yield take turns with the loop's other callbacks", async () => {
    const scheduler = new TurnScheduler(0)
    expect(scheduler.makeDispatcher()).toBe(scheduler.makeDispatcher())
    const ran: Array<string> = []
    const worker = (name: string) =>
      Effect.gen(function*() {
        for (let i = 0; i < 3; i++) {
          ran.push(`${name}${i}`)
          yield* Effect.yieldNow
        }
      })
    const fibers = ["x", "y"].map((name) =>
      Effect.runFork(Effect.provideService(worker(name), Scheduler.Scheduler, scheduler))
    )
    // The default scheduler would run both fibers' next steps in one turn, before this callback.
    setImmediate(() => ran.push("io"))
    await Promise.all(fibers.map((f) => Effect.runPromise(Fiber.join(f))))
    expect(ran.slice(0, 3)).toEqual(["x0", "y0", "x1"])
    expect(ran.indexOf("io")).toBeLessThan(ran.indexOf("y1"))
  })
})
