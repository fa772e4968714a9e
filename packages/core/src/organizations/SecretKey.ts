/**
 * Secret keys: `sk_` followed by 43 random URL-safe characters (256 bits). The clear key is shown once, when it is
 * issued; only its SHA-256 is stored. A fast hash is enough because the key is uniformly random: there is nothing to
 * brute-force that is cheaper than guessing 256 bits, and authentication stays a single indexed lookup.
 */
import { Schema } from "effect"
import { hash, randomBytes } from "node:crypto"
import { OrganizationId, SecretKeyId } from "../kernel/Ids.ts"
import { Permission } from "../kernel/Permission.ts"
import { Timestamp } from "../kernel/Timestamp.ts"

const SECRET_KEY_PREFIX = "sk_"
const wellFormed = /^sk_[A-Za-z0-9_-]{32,}$/

export const generateSecretKey = (): string => SECRET_KEY_PREFIX + randomBytes(32).toString("base64url")

export const isWellFormedSecretKey = (key: string): boolean => wellFormed.test(key)

/** Run on every authenticated request: the one-shot `hash` gives the same digest without a Hash object. */
export const hashSecretKey = (key: string): string => hash("sha256", key, "hex")

/** A stored key: never holds the clear secret. */
export const SecretKeyRecord = Schema.Struct({
  id: SecretKeyId,
  organizationId: OrganizationId,
  name: Schema.String,
  permissions: Schema.Array(Permission),
  keyHash: Schema.String,
  createdAt: Timestamp,
  revokedAt: Schema.NullOr(Timestamp)
})
export type SecretKeyRecord = typeof SecretKeyRecord.Type

/** What the API shows of a key. `secretKey` appears only in the answer to its creation. */
export const SecretKeyView = Schema.Struct({
  id: SecretKeyId,
  name: Schema.String,
  permissions: Schema.Array(Permission),
  createdAt: Timestamp,
  revokedAt: Schema.NullOr(Timestamp)
})
export type SecretKeyView = typeof SecretKeyView.Type

export const IssuedSecretKey = Schema.Struct({
  ...SecretKeyView.fields,
  secretKey: Schema.String
})
export type IssuedSecretKey = typeof IssuedSecretKey.Type

export const toView = (r: SecretKeyRecord): SecretKeyView => ({
  id: r.id,
  name: r.name,
  permissions: r.permissions,
  createdAt: r.createdAt,
  revokedAt: r.revokedAt
})
