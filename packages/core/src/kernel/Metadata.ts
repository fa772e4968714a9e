/** Free-form string key/value pairs attached to records. On update a sent value replaces the stored one wholesale. */
import { Schema } from "effect"
import { BoundedRecord } from "./BoundedArray.ts"
import { BoundedText } from "./Text.ts"

export const Metadata = Schema.Record(Schema.String, Schema.String)
export type Metadata = typeof Metadata.Type

/** Limits of metadata a caller sends (the conventions of Stripe's metadata). */
const metadataLimits = { maxKeys: 50, maxKeyLength: 40, maxValueLength: 500 } as const

/**
 * Metadata as callers send it, one definition for every record: at most 50 keys of 1..40 characters, values up to
 * 500 characters, all storable text. The keys are counted before any of them is decoded.
 */
export const MetadataInput = BoundedRecord(
  BoundedText(metadataLimits.maxKeyLength, 1),
  BoundedText(metadataLimits.maxValueLength),
  metadataLimits.maxKeys
)
export type MetadataInput = typeof MetadataInput.Type
