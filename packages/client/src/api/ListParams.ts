/**
 * The query parameters of the API, typed in the contract (`docs/DECISIONS.md` §4): `limit` is an integer from 1 to
 * 250, `sort` one of the endpoint's values, `include` a list of the endpoint's extras, a flag a boolean. Handlers
 * receive these types, the typed client takes them (`limit: 10`, `include: ["product"]`), and the OpenAPI document
 * describes them (`type: integer` with `minimum`/`maximum`, `enum`s, `type: boolean`).
 *
 * On the wire each value is one string, decoded with the core's own parser (`parseLimit`, `parseSortValue`,
 * `parseInclude`, …), so a bad value is a 400 with the message an embedding host gets from the core, naming
 * `query.<name>`. An empty value (`?limit=`) is the same as an omitted one. Unknown and repeated parameters are
 * 400s too (strict query parsing, `api/Api.ts`).
 */
import { Kernel, Questions } from "@feedback/core"
import { Option, Result, Schema, SchemaAST, SchemaGetter, SchemaTransformation } from "effect"

/** An OpenAPI (JSON Schema) description of a query parameter. */
export type ParameterDocument = { readonly [key: string]: unknown }

const nonBlank = (raw: string) => raw !== ""

/**
 * One optional query parameter whose wire form is a single string and whose value is `type`.
 *
 * `parse` is the only decoder: its failure message becomes the 400's message and a success is the value (it is run
 * once as the check and once as the decoding; both are cheap). `format` is its inverse, used by the typed client.
 * `document` is what the OpenAPI document shows for the parameter: Effect documents a parameter by its wire form,
 * which here is always `type: string`, so the wire form is declared opaque (a string that is kept as it is when
 * the query is encoded) and carries `document` instead.
 */
export const queryParameter = <
  S extends Schema.Top & { readonly DecodingServices: never; readonly EncodingServices: never }
>(
  type: S,
  options: {
    readonly document: ParameterDocument
    readonly parse: (raw: string) => Result.Result<S["Type"], Kernel.InvalidRequest>
    readonly format: (value: S["Type"]) => string
  }
) => {
  const fromWire = new SchemaTransformation.Transformation<S["Type"], string>(
    SchemaGetter.transform((raw: string) => Result.getOrThrow(options.parse(raw))),
    SchemaGetter.transform(options.format)
  )
  const checked = Schema.String.check(Schema.makeFilter((raw: string) =>
    Result.match(options.parse(raw), {
      onSuccess: () => true,
      onFailure: (error) => error.issues[0]?.message ?? error.message
    })
  ))
  const wire = Schema.declare((u): u is string => typeof u === "string", {
    expected: "a single value (the parameter is given once)",
    toCodecStringTree: () => undefined,
    // Samples (the API fuzzer's) are well-formed values of `type`, written as the wire form.
    toCodecArbitrary: () =>
      new SchemaAST.Link(
        type.ast,
        new SchemaTransformation.Transformation(
          SchemaGetter.transform((value: S["Type"]) => options.format(value)),
          SchemaGetter.transform((raw: string) => Result.getOrThrow(options.parse(raw)))
        )
      )
  }).check(Schema.makeFilter(() => true, { toJsonSchema: () => ({ ...options.document }) }))
  return Schema.optionalKey(wire).pipe(
    Schema.decodeTo(
      Schema.optionalKey(checked.pipe(Schema.decodeTo(type, fromWire))),
      SchemaTransformation.transformOptional({
        decode: Option.filter(nonBlank),
        encode: (value: Option.Option<string>) => value
      })
    )
  )
}

/** A free-text parameter: a string, as sent. */
const textParam = (description: string) => Schema.optionalKey(Schema.String.annotate({ description }))

const limitParam = queryParameter(
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: Kernel.listLimits.maxLimit })),
  {
    document: {
      type: "integer",
      minimum: 1,
      maximum: Kernel.listLimits.maxLimit,
      default: Kernel.listLimits.defaultLimit,
      description: `Records to return, 1 to ${Kernel.listLimits.maxLimit} (default ${Kernel.listLimits.defaultLimit}).`
    },
    parse: Kernel.parseLimit,
    format: String
  }
)

const cursorParam = textParam(
  "The previous page's `nextCursor`; only valid with the same sort, filter and search."
)
export const searchParam = textParam(
  "Free text, case-insensitive substring match over the record's identifying fields; ANDed with `filter`."
)
export const filterParam = textParam(
  "JSON filter document: field paths (and `metadata.<key>`), `$and`/`$or`, operators `$eq $ne $gt $gte $lt $lte $in $nin $exists`."
)

/** `sort`: one of `values` (a leading `-` means descending). */
export const sortParam = <const Value extends string>(values: ReadonlyArray<Value>, defaultSort: Value) =>
  queryParameter(Schema.Literals(values), {
    document: {
      type: "string",
      enum: values,
      default: defaultSort,
      description: `Sort order: a field, descending with a leading \`-\`. Default \`${defaultSort}\`.`
    },
    parse: (raw) =>
      Result.flatMap(
        Kernel.parseSortValue(raw, values),
        (value) => value === undefined ? Result.succeed(defaultSort) : Result.succeed(value)
      ),
    format: String
  })

const includeSeparator = ","

/**
 * The document of a list-valued parameter sent as one comma-separated value: an array of the `values`, which the
 * document's post-processing marks `style: form, explode: false` (`include=product,files`).
 */
export const commaSeparated = (values: ReadonlyArray<string>, description: string): ParameterDocument => ({
  type: "array",
  items: { type: "string", enum: values },
  uniqueItems: true,
  description,
  examples: [values.slice(0, 2)]
})

/**
 * `include`: extras to add to each record, as a list. On the wire a comma-separated string (`include=product,files`),
 * which the OpenAPI document describes as an array of the names, not exploded.
 */
export const includeParam = <const Include extends string>(values: ReadonlyArray<Include>) =>
  queryParameter(Schema.Array(Schema.Literals(values)), {
    document: commaSeparated(
      values,
      `Extra fields to add, any of: ${values.join(", ")}. Each costs one more query per page.`
    ),
    parse: (raw) => Kernel.parseInclude(raw, values),
    format: (names) => names.join(includeSeparator)
  })

/** A true/false flag, read by the core's parser for it (`parse` fails with the message the 400 gives). */
export const flagParam = (
  description: string,
  parse: (raw: string) => Result.Result<boolean | undefined, Kernel.InvalidRequest>
) =>
  queryParameter(Schema.Boolean, {
    document: { type: "boolean", description },
    parse: (raw) => Result.map(parse(raw), (value) => value ?? false),
    format: String
  })

/** `answered` of the product question list. */
export const answeredParam = flagParam(
  "true: only questions with at least one published answer; false: only those still waiting. Omitted: both.",
  Questions.parseAnswered
)

/** The parameters every list takes: limit, cursor, sort, search and filter. */
export const listQuery = <const Sort extends string>(endpoint: {
  readonly sorts: ReadonlyArray<Sort>
  readonly defaultSort: NoInfer<Sort>
}) => ({
  limit: limitParam,
  cursor: cursorParam,
  sort: sortParam(endpoint.sorts, endpoint.defaultSort),
  search: searchParam,
  filter: filterParam
})

/** `limit` and `cursor`, for the lists that take neither sort nor filter (webhooks, deliveries). */
export const pageQuery = { limit: limitParam, cursor: cursorParam }

/** A page of `record`s, named `<Record>Page` in the OpenAPI document (the core's one page shape). */
export const pageOf = <S extends Schema.Top>(record: S) => Kernel.pageOf(record)
