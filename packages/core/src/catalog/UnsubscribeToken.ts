/**
 * Unsubscribe tokens (shared DECISIONS §17; docs/EMAILS.md "Unsubscribe"): the path segment of `/u/{token}`, bound to one
 * customer. 32 random bytes (256 bits) in base64url: 43 characters of `[A-Za-z0-9_-]`, well inside §17's 22..64 and
 * its 128-bit floor. Anything that is not of the accepted form is refused before a store is asked.
 */
import { randomBytes } from "node:crypto"

export const UNSUBSCRIBE_TOKEN_BYTES = 32

/** The form every `/u/{token}` token has: 22..64 characters of the base64url alphabet. */
const tokenForm = /^[A-Za-z0-9_-]{22,64}$/

export const isUnsubscribeToken = (value: string): boolean => tokenForm.test(value)

/** A fresh token: 256 random bits. */
export const newUnsubscribeToken = (): string => randomBytes(UNSUBSCRIBE_TOKEN_BYTES).toString("base64url")

/** The link for a token under the API's public base URL (no trailing slash). */
export const unsubscribeUrl = (baseUrl: string, token: string): string => `${baseUrl.replace(/\/+$/, "")}/u/${token}`

/** `emailOptOutSource` of a customer who unsubscribed through an email's link or their mail client's button. */
export const UNSUBSCRIBE_LINK_SOURCE = "unsubscribe_link"
