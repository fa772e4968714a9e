/**
 * The standalone server's fiber scheduler: Effect's default one, except that every fiber's yields wait in one queue
 * and a turn of the event loop runs them for at most `TURN_MS`; what is left waits for the next turn, after the
 * loop has read and written the sockets. By default each fiber asks for a turn of its own, and one turn runs every
 * fiber that yielded: many large lists at once held the loop for all their slices together, and `/health` waited
 * behind them (docs/DECISIONS.md §74).
 *
 * A request's first step runs as its data arrives, outside any turn: a short request (`/health`) is answered
 * between two turns, whatever waits in the queue.
 */
import { Scheduler } from "effect"

/** How long one turn of the event loop runs queued fiber steps before letting the loop read the sockets. */
export const TURN_MS = 5

/** Tasks by priority (lower first), each priority in arrival order. */
class TurnQueue implements Scheduler.SchedulerDispatcher {
  private readonly byPriority = new Map<number, Array<() => void>>()
  private size = 0
  private turnAsked = false
  private readonly turnMs: number
  constructor(turnMs: number) {
    this.turnMs = turnMs
  }

  scheduleTask(task: () => void, priority: number): void {
    let tasks = this.byPriority.get(priority)
    if (tasks === undefined) {
      tasks = []
      this.byPriority.set(priority, tasks)
    }
    tasks.push(task)
    this.size++
    if (!this.turnAsked) {
      this.turnAsked = true
      setImmediate(this.turn)
    }
  }

  flush(): void {
    while (this.size > 0) this.run(Infinity)
  }

  private readonly turn = () => {
    this.turnAsked = false
    this.run(performance.now() + this.turnMs)
    if (this.size > 0 && !this.turnAsked) {
      this.turnAsked = true
      setImmediate(this.turn)
    }
  }

  /** Runs the queued tasks, lowest priority first, until none is left or the deadline has passed. */
  private run(deadline: number): void {
    const priorities = [...this.byPriority.keys()].sort((a, b) => a - b)
    for (const priority of priorities) {
      const tasks = this.byPriority.get(priority)!
      this.byPriority.delete(priority)
      let i = 0
      try {
        while (i < tasks.length) {
          const task = tasks[i++]!
          this.size--
          task()
          if (performance.now() >= deadline) break
        }
      } finally {
        if (i < tasks.length) {
          // The rest keeps its place ahead of what was queued meanwhile at the same priority.
          const later = this.byPriority.get(priority)
          this.byPriority.set(priority, later === undefined ? tasks.slice(i) : [...tasks.slice(i), ...later])
        }
      }
      if (i < tasks.length || performance.now() >= deadline) return
    }
  }
}

/** A scheduler whose fibers share one `TurnQueue` (yields bounded per turn of the event loop). */
export class TurnScheduler implements Scheduler.Scheduler {
  readonly executionMode = "async" as const
  private readonly queue: TurnQueue
  constructor(turnMs: number = TURN_MS) {
    this.queue = new TurnQueue(turnMs)
  }
  shouldYield(fiber: Parameters<Scheduler.Scheduler["shouldYield"]>[0]): boolean {
    return fiber.currentOpCount >= fiber.cache.maxOpsBeforeYield
  }
  makeDispatcher(): Scheduler.SchedulerDispatcher {
    return this.queue
  }
}
