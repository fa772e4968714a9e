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

/** A keyed table whose mutations are journaled. Iteration order is insertion order. */
export class MemoryTable<K, V> {
  readonly rows = new Map<K, V>()
  private readonly db: MemoryDatabaseImpl
  /** Moves on every write and every undone write: a reader can tell that rows changed since it looked. */
  private changes = 0
  constructor(db: MemoryDatabaseImpl) {
    this.db = db
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
    this.db.journal(had ? () => this.restore(key, previous as V) : () => this.remove(key))
    this.changes++
    this.rows.set(key, value)
  }
  delete(key: K): boolean {
    if (!this.rows.has(key)) return false
    const previous = this.rows.get(key) as V
    this.db.journal(() => this.restore(key, previous))
    this.changes++
    this.rows.delete(key)
    return true
  }
  private restore(key: K, value: V): void {
    this.changes++
    this.rows.set(key, value)
  }
  private remove(key: K): void {
    this.changes++
    this.rows.delete(key)
  }
}

class MemoryDatabaseImpl {
  private readonly lock = Semaphore.makeUnsafe(1)
  private readonly tables = new Map<string, MemoryTable<unknown, unknown>>()
  private activeJournal: Array<Undo> | undefined = undefined

  table<K, V>(name: string): MemoryTable<K, V> {
    let t = this.tables.get(name)
    if (t === undefined) {
      t = new MemoryTable<unknown, unknown>(this)
      this.tables.set(name, t)
    }
    return t as MemoryTable<K, V>
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
              if (Exit.isFailure(exit)) for (let i = journal.length - 1; i >= 0; i--) journal[i]!()
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

export class MemoryDatabase extends Context.Service<MemoryDatabase, MemoryDatabaseImpl>()("feedback/memory/MemoryDatabase") {
  /** A fresh, empty database per layer build. */
  static readonly layer = Layer.sync(MemoryDatabase, () => new MemoryDatabaseImpl())
}
