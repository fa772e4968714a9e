/**
 * What callers send to create, change and import catalog records (docs/DECISIONS.md §9), and what an import answers.
 *
 * Every string that reaches storage is checked here: bounded length, no NUL character and no lone surrogate
 * (PostgreSQL text and jsonb cannot hold either, and a store error must never be the answer to bad input).
 * Fields the spec calls nullable accept `null` explicitly (`Schema.optionalKey(Schema.NullOr(...))`): on create
 * null and omitted mean the same; on PATCH null clears the field and omitted leaves it alone.
 */
import { Schema } from "effect"
import { BoundedArray } from "../kernel/BoundedArray.ts"
import { EmailAddress } from "../kernel/EmailAddress.ts"
import { Uuid } from "../kernel/Ids.ts"
import { MetadataInput } from "../kernel/Metadata.ts"
import { importTooLarge } from "../reviews/ReviewRequests.ts"
import { BoundedText } from "../kernel/Text.ts"
import { TimestampInput } from "../kernel/Timestamp.ts"

/** Storable text of `min..max` characters (the length is checked first and aborts). */
const StorableText = (max: number, min = 0) => BoundedText(max, min)

/** A required, non-blank name-like value, trimmed by the caller. */
const Name = (max: number) => StorableText(max, 1).pipe(Schema.check(Schema.isTrimmed()))

const nullable = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

/** Metadata as callers send it: the one definition of `Metadata.ts` (50 keys of 1..40 characters, values ≤ 500). */
const CatalogMetadataInput = MetadataInput

/** An email address: the one check of `EmailAddress.ts`. Stored lower-cased. */
const EmailInput = EmailAddress

const Url = StorableText(2048, 1)

export const SiteCreate = Schema.Struct({
  name: Name(200),
  domain: nullable(Name(253))
}).annotate({ identifier: "SiteCreate" })
export type SiteCreate = typeof SiteCreate.Type

const productFields = {
  slug: Name(255),
  title: Name(500),
  description: nullable(StorableText(20_000)),
  imageUrl: nullable(Url),
  url: nullable(Url),
  externalId: nullable(Name(255)),
  metadata: Schema.optionalKey(CatalogMetadataInput),
  notes: nullable(StorableText(5_000))
}

export const ProductCreate = Schema.Struct(productFields).annotate({ identifier: "ProductCreate" })
export type ProductCreate = typeof ProductCreate.Type

/** Only sent fields change; `metadata` replaces the stored metadata wholesale. */
export const ProductPatch = Schema.Struct({
  slug: Schema.optionalKey(productFields.slug),
  title: Schema.optionalKey(productFields.title),
  description: productFields.description,
  imageUrl: productFields.imageUrl,
  url: productFields.url,
  externalId: productFields.externalId,
  metadata: productFields.metadata,
  notes: productFields.notes
}).annotate({ identifier: "ProductPatch" })
export type ProductPatch = typeof ProductPatch.Type

export const CustomerCreate = Schema.Struct({
  email: EmailInput,
  phone: nullable(StorableText(50)),
  firstName: nullable(StorableText(200)),
  lastName: nullable(StorableText(200)),
  country: nullable(StorableText(100)),
  birthday: nullable(StorableText(50)),
  metadata: Schema.optionalKey(CatalogMetadataInput),
  notes: nullable(StorableText(5_000)),
  emailOptOut: Schema.optionalKey(Schema.Boolean),
  /** When the customer opted out; defaults to the time of the call when `emailOptOut` is true. */
  emailOptOutAt: nullable(TimestampInput),
  emailOptOutSource: nullable(StorableText(100))
}).annotate({ identifier: "CustomerCreate" })
export type CustomerCreate = typeof CustomerCreate.Type

/** At most this many rows per catalog import request (docs/DECISIONS.md §5, applied to every import). */
const MAX_IMPORT_ROWS = 10_000

const importRequest = <S extends Schema.Top>(row: S) =>
  Schema.Struct({
    /** Counted before any row is decoded: a larger import is refused at once (`docs/SECURITY.md`). */
    data: BoundedArray(row, MAX_IMPORT_ROWS, importTooLarge(MAX_IMPORT_ROWS)),
    /** With `strict`, the first row that cannot be imported fails the whole import and nothing is imported. */
    strict: Schema.optionalKey(Schema.Boolean)
  })

export const ProductImport = importRequest(ProductCreate).annotate({ identifier: "ProductImport" })
export type ProductImport = typeof ProductImport.Type
export const CustomerImport = importRequest(CustomerCreate).annotate({ identifier: "CustomerImport" })
export type CustomerImport = typeof CustomerImport.Type

export const ImportResult = Schema.Struct({
  imported: Schema.Array(Schema.Struct({ index: Schema.Int, id: Uuid })),
  skipped: Schema.Array(Schema.Struct({ index: Schema.Int, message: Schema.String }))
}).annotate({ identifier: "ImportResult" })
export type ImportResult = typeof ImportResult.Type
