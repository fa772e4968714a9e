/**
 * Where new record ids come from. The default issues UUIDv7 values: time-ordered ids keep B-tree inserts local and
 * make id a natural tiebreaker after a timestamp. Tests can swap in a deterministic generator.
 */
import { Context, Effect, Layer } from "effect"
import { randomFillSync } from "node:crypto"

export class IdGenerator extends Context.Service<IdGenerator, {
  readonly next: Effect.Effect<string>
}>()("feedback/IdGenerator") {
  static readonly uuidV7 = Layer.succeed(IdGenerator, IdGenerator.of({ next: Effect.sync(() => uuidV7(Date.now())) }))
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"))

// Random bits for 512 ids per call into the CSPRNG: one call per id cost more than the rest of the id (an import
// of 10,000 reviews makes ~15,000 ids).
const pool = new Uint8Array(8 * 512)
let poolAt = pool.length

let lastMs = -1
let sequence = 0
// The id's time fields as text, for `textMs`: a double's `toString(16)` is a slow path (fmod per digit), and the ids
// made in one millisecond share it.
let textMs = -1
let timeText = ""

/**
 * RFC 9562 UUID version 7: 48-bit Unix milliseconds, a 12-bit sequence (method 1 of RFC 9562 §6.2) so ids made in
 * the same millisecond by this process still sort in creation order, then random bits; version and variant set.
 */
export const uuidV7 = (millis: number): string => {
  let ms = Math.floor(millis)
  if (ms <= lastMs) {
    ms = lastMs
    sequence++
    // The sequence ran out within one millisecond: borrow the next millisecond rather than repeat an order.
    if (sequence > 0xfff) {
      ms = lastMs + 1
      sequence = 0
    }
  } else {
    sequence = 0
  }
  lastMs = ms
  if (poolAt === pool.length) {
    randomFillSync(pool)
    poolAt = 0
  }
  const r = poolAt
  poolAt += 8
  if (ms !== textMs) {
    const time = ms.toString(16).padStart(12, "0")
    timeText = `${time.slice(0, 8)}-${time.slice(8)}-`
    textMs = ms
  }
  return `${timeText}${(0x7000 | sequence).toString(16)}-${HEX[(pool[r]! & 0x3f) | 0x80]}${HEX[pool[r + 1]!]}-${
    HEX[pool[r + 2]!]
  }${HEX[pool[r + 3]!]}${HEX[pool[r + 4]!]}${HEX[pool[r + 5]!]}${HEX[pool[r + 6]!]}${HEX[pool[r + 7]!]}`
}

/** A fresh id from `generator`, branded as the caller needs (ids are validated UUIDs by construction). */
export const nextIdFrom = <Id extends string>(generator: IdGenerator["Service"]): Effect.Effect<Id> =>
  Effect.map(generator.next, (id) => id as Id)

/**
 * A fresh id from the context's generator. Use-case services use `nextIdFrom` with the generator they captured;
 * this stays for free-standing helpers that run once with a store in context, such as test seeds and suites.
 */
export const nextId = <Id extends string>(): Effect.Effect<Id, never, IdGenerator> =>
  IdGenerator.use((g) => nextIdFrom<Id>(g))
