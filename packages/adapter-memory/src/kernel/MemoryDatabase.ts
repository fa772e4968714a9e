/**
 * The in-memory database: named tables of records plus transactions with an undo journal.
 *
 * A transaction holds a single write lock for its whole run, so transactions are serializable; every mutation made
 * inside it pushes its inverse onto the journal, and a failed or interrupted transaction replays the journal
 * backwards. A mutation outside any transaction runs as a transaction of its own. Reads take no lock: they may see
 * a running transaction's writes, which is acceptable for tests and embedding (the PostgreSQL store is the one with
 * isolation levels).
 *
 * An organization's long transaction (`organizationTransaction`, a strict import job) holds the lock only for each
 * of its steps (the transactions it runs inside), so other organizations' transactions run between them; until it
 * ends it holds its organization's gate, which every transaction of that organization's caller takes first, so
 * nothing else of that organization interleaves with it and its undo touches only what it wrote (docs/FAIRNESS.md).
 */
import { Kernel } from "@feedback/core"
import { Context, Effect, Exit, Layer, Option, Semaphore } from "effect"

type Undo = () => void

const replay = (undo: ReadonlyArray<Undo>) => {
  for (let i = undo.length - 1; i >= 0; i--) undo[i]!()
}

/** The running transaction's journal; `locked` when this fiber holds the write lock (not between a long one's steps). */
interface Journal {
  readonly undo: Array<Undo>
  readonly locked: boolean
}

const CurrentJournal = Context.Reference<Journal | undefined>("feedback/memory/CurrentJournal", {
  defaultValue: () => undefined
})

/**
 * Something kept up to date from a table's rows (an index, a count): told of every change, and of its undo, in the
 * same synchronous step, so it can never disagree with the rows, inside or after a transaction.
 */
export interface RowObserver<V, K = unknown> {
  readonly changed: (before: V | undefined, after: V | undefined, key: K) => void
}

/** A keyed table whose mutations are journaled. Iteration order is insertion order. */
export class MemoryTable<K, V, O extends RowObserver<V, K> | undefined = undefined> {
  readonly rows = new Map<K, V>()
  private readonly db: MemoryDatabaseImpl
  readonly observer: O
  /** Moves on every write and every undone write: a reader can tell that rows changed since it looked. */
  private changes = 0
  constructor(db: MemoryDatabaseImpl, observer: O) {
    this.db = db
    this.observer = observer
  }

  get version(): number {
    return this.changes
  }

  get(key: K): V | undefined {
    return this.rows.get(key)
  }
  values(): IterableIterator<V> {
    return this.rows.values()
  }
  get size(): number {
    return this.rows.size
  }
  /** Inserts or replaces; must run inside `db.mutate` (all repository writes do). */
  set(key: K, value: V): void {
    const had = this.rows.has(key)
    const previous = this.rows.get(key)
    this.db.journal(had ? () => this.put(key, value, previous as V) : () => this.remove(key, value))
    this.put(key, previous, value)
  }
  delete(key: K): boolean {
    if (!this.rows.has(key)) return false
    const previous = this.rows.get(key) as V
    this.db.journal(() => this.put(key, undefined, previous))
    this.remove(key, previous)
    return true
  }
  private put(key: K, before: V | undefined, after: V): void {
    this.changes++
    this.rows.set(key, after)
    this.observer?.changed(before, after, key)
  }
  private remove(key: K, before: V): void {
    this.changes++
    this.rows.delete(key)
    this.observer?.changed(before, undefined, key)
  }
}

class MemoryDatabaseImpl {
  private readonly lock = Semaphore.makeUnsafe(1)
  /** Per organization: held by its long transaction, taken first by its other transactions. */
  private readonly gates = new Map<string, Semaphore.Semaphore>()
  /** Organizations with a long transaction open: their writes so far may still be undone. */
  private readonly longRunning = new Set<string>()
  private readonly tables = new Map<string, MemoryTable<unknown, unknown, RowObserver<unknown> | undefined>>()
  private activeJournal: Array<Undo> | undefined = undefined

  /** The table of that name, created on first use (with its observer, if it has one: every caller passes the same). */
  table<K, V>(name: string): MemoryTable<K, V>
  table<K, V, O extends RowObserver<V, K>>(name: string, observer: () => O): MemoryTable<K, V, O>
  table<K, V>(name: string, observer?: () => RowObserver<V, K>): MemoryTable<K, V, RowObserver<V, K> | undefined> {
    let t = this.tables.get(name)
    if (t === undefined) {
      t = new MemoryTable<unknown, unknown, RowObserver<unknown> | undefined>(
        this,
        observer?.() as RowObserver<unknown> | undefined
      )
      this.tables.set(name, t)
    } else if (observer !== undefined && t.observer === undefined) {
      // Opened first without its observer, the table would never keep it up to date: a wiring bug, caught at once.
      throw new Error(`memory table ${name} was opened without its observer`)
    }
    return t as unknown as MemoryTable<K, V, RowObserver<V, K> | undefined>
  }

  /** The names of the tables created so far (test support inspects every row). */
  tableNames(): ReadonlyArray<string> {
    return [...this.tables.keys()]
  }

  journal(undo: Undo): void {
    this.activeJournal?.push(undo)
  }

  /** Whether the organization has a long transaction open (its writes so far are not committed). */
  heldBack(organizationId: string): boolean {
    return this.longRunning.has(organizationId)
  }

  private gate(organizationId: string): Semaphore.Semaphore {
    let gate = this.gates.get(organizationId)
    if (gate === undefined) {
      gate = Semaphore.makeUnsafe(1)
      this.gates.set(organizationId, gate)
    }
    return gate
  }

  /**
   * Runs `effect` holding the write lock, its writes journaled into `undo`; `undoOnFailure`: a failure replays the
   * journal backwards before the lock is let go.
   */
  private locked<A, E, R>(
    undo: Array<Undo>,
    effect: Effect.Effect<A, E, R>,
    undoOnFailure: boolean
  ): Effect.Effect<A, E, R> {
    return this.lock.withPermits(1)(Effect.suspend(() => {
      this.activeJournal = undo
      return effect.pipe(
        Effect.provideService(CurrentJournal, { undo, locked: true }),
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (undoOnFailure && Exit.isFailure(exit)) replay(undo)
            this.activeJournal = undefined
          })
        )
      )
    }))
  }

  /**
   * A transaction; `organizationId` (else the current caller's organization) waits for that organization's long
   * transaction to end first.
   */
  transaction<A, E, R>(effect: Effect.Effect<A, E, R>, organizationId?: string): Effect.Effect<A, E, R> {
    return Effect.flatMap(CurrentJournal, (outer) => {
      if (outer !== undefined) return outer.locked ? effect : this.locked(outer.undo, effect, false)
      const run = Effect.suspend(() => this.locked([], effect, true))
      return Effect.flatMap(
        organizationId === undefined ? Effect.serviceOption(Kernel.CurrentCaller) : Effect.succeed(Option.none()),
        (caller) => {
          const of = organizationId ?? (Option.isSome(caller) ? caller.value.organizationId : undefined)
          return of === undefined ? run : this.gate(of).withPermits(1)(run)
        }
      )
    })
  }

  /**
   * A transaction of one organization that may run long: all or nothing like `transaction`, but the write lock is
   * held only by the transactions it runs inside (its steps); between them other organizations' transactions run.
   */
  organizationTransaction<A, E, R>(organizationId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.flatMap(CurrentJournal, (outer) => {
      if (outer !== undefined) return effect
      return this.gate(organizationId).withPermits(1)(Effect.suspend(() => {
        const undo: Array<Undo> = []
        this.longRunning.add(organizationId)
        return effect.pipe(
          Effect.provideService(CurrentJournal, { undo, locked: false }),
          // Undone under the lock; other organizations' transactions may have run since its last step.
          Effect.onExit((exit) =>
            Exit.isFailure(exit) ? this.lock.withPermits(1)(Effect.sync(() => replay(undo))) : Effect.void
          ),
          Effect.ensuring(Effect.sync(() => {
            this.longRunning.delete(organizationId)
          }))
        )
      }))
    })
  }

  /** A synchronous mutation; joins the running transaction or runs as its own. */
  mutate<A>(f: () => A): Effect.Effect<A> {
    return this.transaction(Effect.sync(f))
  }
}

export class MemoryDatabase
  extends Context.Service<MemoryDatabase, MemoryDatabaseImpl>()("feedback/memory/MemoryDatabase")
{
  /** A fresh, empty database per layer build. */
  static readonly layer = Layer.sync(MemoryDatabase, () => new MemoryDatabaseImpl())
}
