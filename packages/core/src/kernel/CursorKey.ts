/**
 * The key that seals list cursors (docs/SECURITY.md: cursors are opaque and tamper-evident). A cursor carries a
 * keyset position; the key's MAC over it means a client can only hand back positions this API issued, so nothing
 * forged ever reaches a query.
 *
 * The key is either configured (`CURSOR_SECRET`, at least 32 characters: `CursorKey.layer`) or generated once and
 * kept in the store (`CursorKey.layerStored`), so every process sharing a database issues and accepts the same
 * cursors, and cursors survive a restart. MAC computation is pure computation, like `WebhookSignature.ts`.
 */
import { Context, Effect, Layer, Result } from "effect"
import { createHmac, createSecretKey, randomBytes, timingSafeEqual } from "node:crypto"

/** Shorter configured secrets are refused: the key must not be guessable. */
const cursorSecretMinLength = 32

/** Bytes of the truncated HMAC-SHA256 tag a cursor carries (128 bits). */
export const cursorTagBytes = 16

/** The name under which the generated cursor secret is kept in a store's instance secrets. */
export const cursorSecretName = "cursor"

export class CursorKey extends Context.Service<CursorKey, {
  /** The MAC of `payload` (HMAC-SHA256 truncated to `cursorTagBytes`). */
  readonly tag: (payload: Uint8Array) => Uint8Array
}>()("feedback/CursorKey") {
  /** A key from a secret's UTF-8 bytes. The secret is captured, never exposed by the service. */
  static readonly fromSecret = (secret: string): CursorKey["Service"] => {
    // A key object made once: a string key is converted and imported again by every `createHmac`.
    const key = createSecretKey(Buffer.from(secret, "utf8"))
    return CursorKey.of({
      tag: (payload) => createHmac("sha256", key).update(payload).digest().subarray(0, cursorTagBytes)
    })
  }

  /** A configured key (`CURSOR_SECRET`); a secret shorter than 32 characters refuses to start. */
  static readonly layer = (secret: string): Layer.Layer<CursorKey> =>
    Layer.effect(
      CursorKey,
      Effect.suspend(() => {
        const checked = checkCursorSecret(secret)
        return Result.isSuccess(checked)
          ? Effect.succeed(CursorKey.fromSecret(checked.success))
          : Effect.die(new Error(checked.failure))
      })
    )

  /** The key generated once per store and kept there (first writer wins, so concurrent processes agree). */
  static readonly layerStored: Layer.Layer<CursorKey, never, InstanceSecretRepository> = Layer.effect(
    CursorKey,
    Effect.gen(function*() {
      const secrets = yield* InstanceSecretRepository
      return CursorKey.fromSecret(yield* secrets.getOrCreate(cursorSecretName, generateCursorSecret()))
    })
  )
}

/**
 * Secrets that belong to the whole installation rather than to an organization (today only the cursor key).
 * `getOrCreate` is insert-if-absent: the first value stored under a name is the one every caller gets back.
 */
export class InstanceSecretRepository extends Context.Service<InstanceSecretRepository, {
  readonly getOrCreate: (name: string, candidate: string) => Effect.Effect<string>
}>()("feedback/InstanceSecretRepository") {}

/** 256 random bits, base64url (43 characters). */
const generateCursorSecret = (): string => randomBytes(32).toString("base64url")

const checkCursorSecret = (secret: string): Result.Result<string, string> =>
  secret.length >= cursorSecretMinLength
    ? Result.succeed(secret)
    : Result.fail(
      `CURSOR_SECRET must be at least ${cursorSecretMinLength} characters; unset it to use a generated key kept in the store`
    )

/** Whether `tag` is the key's MAC of `payload`, compared in constant time. */
export const verifyCursorTag = (key: CursorKey["Service"], payload: Uint8Array, tag: Uint8Array): boolean => {
  const expected = key.tag(payload)
  return tag.length === expected.length && timingSafeEqual(tag, expected)
}
