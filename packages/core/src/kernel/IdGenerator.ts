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

const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString("hex")

let lastMs = -1
let sequence = 0

/**
 * RFC 9562 UUID version 7: 48-bit Unix milliseconds, a 12-bit sequence (method 1 of RFC 9562 §6.2) so ids made in
 * the same millisecond by this process still sort in creation order, then random bits; version and variant set.
 */
export const uuidV7 = (millis: number): string => {
  const bytes = new Uint8Array(16)
  randomFillSync(bytes, 8)
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
  bytes[6] = (sequence >> 8) & 0x0f
  bytes[7] = sequence & 0xff
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256
    ms = Math.floor(ms / 256)
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const h = hex(bytes)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
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
