/** Free-form string key/value pairs attached to records. On update a sent value replaces the stored one wholesale. */
import { Schema } from "effect"

export const Metadata = Schema.Record(Schema.String, Schema.String)
export type Metadata = typeof Metadata.Type
