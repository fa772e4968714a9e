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

/** RFC 9562 UUID version 7: 48-bit Unix milliseconds, then random bits with version and variant set. */
export const uuidV7 = (millis: number): string => {
  const bytes = new Uint8Array(16)
  randomFillSync(bytes, 6)
  let ms = Math.floor(millis)
  for (let i = 5; i >= 0; i--) {
    bytes[i] = ms % 256
    ms = Math.floor(ms / 256)
  }
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const h = hex(bytes)
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** A fresh id branded as the caller needs (ids are validated UUIDs by construction). */
export const nextId = <Id extends string>(): Effect.Effect<Id, never, IdGenerator> =>
  IdGenerator.use((g) => g.next) as Effect.Effect<Id, never, IdGenerator>
