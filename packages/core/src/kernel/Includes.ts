/**
 * The one include mechanism of every list and get (`include=customer,product,…`, docs/DECISIONS.md §4): a capability
 * describes each include as data — how to load it for a whole batch of records, and where its value comes from for
 * one record — and `attachIncludes` does the rest the same way everywhere:
 * - each requested include costs exactly one load for the batch, never one per record, all loads run concurrently;
 * - an include that was not requested is absent from the answer (not null), and costs nothing;
 * - a keyed include with nothing to look up (every key null) makes no call at all;
 * - an include the store already read with the records (`loaded`, e.g. in the page's own statement) is not loaded
 *   again: its value comes from what was read, through the same `value` (docs/DECISIONS.md §33).
 */
import { Effect } from "effect"

/** One include: a batch load and the value it gives each record. */
export interface IncludeLoader<R, L> {
  readonly load: (records: ReadonlyArray<R>) => Effect.Effect<L>
  readonly value: (record: R, loaded: L) => unknown
}

export type IncludeLoaders<R, Name extends string> = { readonly [K in Name]: IncludeLoader<R, any> }

const distinct = (values: Iterable<string | null>): ReadonlyArray<string> => {
  const set = new Set<string>()
  for (const v of values) if (v !== null) set.add(v)
  return [...set]
}

/** Distinct non-null values, in first-seen order: what a batched lookup is given. */
export const distinctKeys = distinct

const emptyMap: ReadonlyMap<string, never> = new Map<string, never>()

/**
 * The common case: each record points at (at most) one key; the batch is looked up in one call with the distinct
 * keys, and a record whose key is missing (or null) gets `missing`.
 */
export const byKey = <R, V>(
  key: (record: R) => string | null,
  load: (keys: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, V>>,
  missing: V | null = null
): IncludeLoader<R, ReadonlyMap<string, V>> => ({
  load: (records) => {
    const keys = distinct(records.map(key))
    return keys.length === 0 ? Effect.succeed(emptyMap) : load(keys)
  },
  value: (record, loaded) => {
    const k = key(record)
    return k === null ? missing : loaded.get(k) ?? missing
  }
})

/**
 * Adds the requested includes to each record (`base` gives the record's own fields). Unknown names cannot reach
 * here: the list request parser refuses them first. `loaded` holds what a store read along with the records, by
 * include name, in the form that include's `load` gives; those are not loaded again.
 */
export const attachIncludes = <R, Name extends string, Out>(
  records: ReadonlyArray<R>,
  include: ReadonlyArray<Name>,
  loaders: IncludeLoaders<R, Name>,
  base: (record: R) => object,
  loaded?: Partial<Record<Name, unknown>>
): Effect.Effect<ReadonlyArray<Out>> => {
  if (include.length === 0 || records.length === 0) return Effect.succeed(records.map((r) => base(r) as Out))
  const wanted = [...new Set(include)]
  const attach = (values: ReadonlyArray<unknown>) =>
    records.map((record) => {
      const out: Record<string, unknown> = { ...base(record) }
      wanted.forEach((name, i) => {
        out[name] = loaders[name].value(record, values[i])
      })
      return out as Out
    })
  const read = (name: Name) => loaded !== undefined && Object.hasOwn(loaded, name)
  // Everything already read: no loads to run, so no fibers to start.
  if (wanted.every(read)) return Effect.sync(() => attach(wanted.map((name) => loaded![name])))
  return Effect.forEach(
    wanted,
    (name) => read(name) ? Effect.succeed(loaded![name]) : loaders[name].load(records),
    { concurrency: "unbounded" }
  ).pipe(Effect.map(attach))
}
