/**
 * The in-memory database: named tables of records plus transactions with an undo journal.
 *
 * A transaction holds a single write lock for its whole run, so transactions are serializable; every mutation made
 * inside it pushes its inverse onto the journal, and a failed or interrupted transaction replays the journal
 * backwards. A mutation outside any transaction runs as a transaction of its own. Reads take no lock: they may see
 * a running transaction's writes, which is acceptable for tests and embedding (the PostgreSQL store is the one with
 * isolation levels).
 */
import { Context, Effect, Exit, Layer, Semaphore } from "effect"

type Undo = () => void

const CurrentJournal = Context.Reference<Array<Undo> | undefined>("feedback/memory/CurrentJournal", {
  defaultValue: () => undefined
})

/**
 * Something kept up to date from a table's rows (an index, a count): told of every change, and of its undo, in the
 * same synchronous step, so it can never disagree with the rows, inside or after a transaction.
 */
export interface RowObserver<V> {
  readonly changed: (before: V | undefined, after: V | undefined) => void
}

/** A keyed table whose mutations are journaled. Iteration order is insertion order. */
export class MemoryTable<K, V, O extends RowObserver<V> | undefined = undefined> {
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
    this.observer?.changed(before, after)
  }
  private remove(key: K, before: V): void {
    this.changes++
    this.rows.delete(key)
    this.observer?.changed(before, undefined)
  }
}

class MemoryDatabaseImpl {
  private readonly lock = Semaphore.makeUnsafe(1)
  private readonly tables = new Map<string, MemoryTable<unknown, unknown, RowObserver<unknown> | undefined>>()
  private activeJournal: Array<Undo> | undefined = undefined

  /** The table of that name, created on first use (with its observer, if it has one: every caller passes the same). */
  table<K, V>(name: string): MemoryTable<K, V>
  table<K, V, O extends RowObserver<V>>(name: string, observer: () => O): MemoryTable<K, V, O>
  table<K, V>(name: string, observer?: () => RowObserver<V>): MemoryTable<K, V, RowObserver<V> | undefined> {
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
    return t as unknown as MemoryTable<K, V, RowObserver<V> | undefined>
  }

  /** The names of the tables created so far (test support inspects every row). */
  tableNames(): ReadonlyArray<string> {
    return [...this.tables.keys()]
  }

  journal(undo: Undo): void {
    this.activeJournal?.push(undo)
  }

  transaction<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> {
    return Effect.flatMap(CurrentJournal, (outer) => {
      if (outer !== undefined) return effect
      return this.lock.withPermits(1)(Effect.suspend(() => {
        const journal: Array<Undo> = []
        this.activeJournal = journal
        return effect.pipe(
          Effect.provideService(CurrentJournal, journal),
          Effect.onExit((exit) =>
            Effect.sync(() => {
              if (Exit.isFailure(exit)) { for (let i = journal.length - 1; i >= 0; i--) journal[i]!() }
              this.activeJournal = undefined
            })
          )
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
