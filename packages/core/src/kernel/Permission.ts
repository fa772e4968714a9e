/** Permissions a secret key may hold (docs/DECISIONS.md §2). Each operation requires exactly one. */
import { Schema } from "effect"

export const permissions = [
  "settings:read",
  "settings:write",
  "reviews:read",
  "reviews:write",
  "products:read",
  "products:write",
  "customers:read",
  "customers:write",
  "orders:read",
  "orders:write"
] as const

export const Permission = Schema.Literals(permissions)
export type Permission = typeof Permission.Type
