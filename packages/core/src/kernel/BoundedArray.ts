/**
 * Arrays and records whose size is checked before their members are decoded.
 *
 * `Schema.Array(item).check(isMaxLength(n))` decodes every element first and only then counts them, so a request
 * with a million rows costs a million row decodings (and as many issues) before it is refused. Here the input is
 * first read as an array of unknown values with an aborting size check, and only then decoded as `item`s: an
 * over-long array is refused at the cost of one comparison. See `docs/SECURITY.md`.
 *
 * The OpenAPI / JSON Schema document still describes the real members: the size check carries the member schema
 * as a dependency and renders `{items, maxItems}`.
 */
import { Result, Schema, SchemaAST, SchemaGetter } from "effect"
import { requestIssuesOf } from "./RequestIssues.ts"

const sizeRepresentation = (id: string, max: number, members: Schema.Top) => ({
  id,
  payload: { max },
  // The JSON wire form of the members (what HttpApi decodes a body with), so the document shows what a client sends.
  schemas: [SchemaAST.toEncoded(Schema.toCodecJson(members).ast)]
})

/**
 * The first stage: only the container's kind, in O(1), whatever its size. Typed as the members' encoded form so
 * clients keep their row types; the members themselves are checked by the second stage. Its JSON form is the value
 * itself (`toCodecJson: undefined`): JSON codecs would otherwise walk every member of an opaque value.
 */
const envelope = <A>(is: (u: unknown) => boolean, expected: string, members: Schema.Top) =>
  Schema.declare((u: unknown): u is A => is(u), {
    expected,
    toCodecJson: () => undefined,
    // Generators (property tests, the API fuzz harness) produce real members: the members' wire form, unchanged.
    toCodecArbitrary: () =>
      Schema.link<A>()(
        Schema.toEncoded(members),
        { decode: SchemaGetter.passthrough(), encode: SchemaGetter.passthrough() } as never
      )
  })

const keyProblem = (error: Schema.SchemaError): string =>
  requestIssuesOf("", error).issues[0]?.message ?? "is not allowed"

const isPlainObject = (u: unknown): boolean => typeof u === "object" && u !== null && !Array.isArray(u)

/** At least `min` items, with `message` the whole issue text when there are fewer. */
export interface AtLeast {
  readonly min: number
  readonly message: string
}

/**
 * An array of at most `max` `item`s (and, with `atLeast`, at least so many). `message` is the whole issue text when
 * the array is too long (default: "has N items; at most max are allowed").
 */
export const BoundedArray = <S extends Schema.Top>(item: S, max: number, message?: string, atLeast?: AtLeast) => {
  const members = Schema.Array(item)
  return envelope<ReadonlyArray<S["Encoded"]>>(Array.isArray, "array", members).check(Schema.makeFilter(
    (a: ReadonlyArray<unknown>) =>
      atLeast !== undefined && a.length < atLeast.min
        ? atLeast.message
        : a.length <= max
        ? undefined
        : message ?? `has ${a.length} items; at most ${max} are allowed`,
    {
      expected: `an array of at most ${max} items`,
      representation: sizeRepresentation("feedback/BoundedArray", max, members),
      toJsonSchema: ({ schemas }) => ({
        ...schemas[0]!,
        ...(atLeast === undefined ? {} : { minItems: atLeast.min }),
        maxItems: max
      })
    },
    true
  )).pipe(Schema.decodeTo(members))
}

/**
 * A record of at most `max` keys, each key decoded by `key` and each value by `value`, counted before any entry is
 * decoded.
 */
export const BoundedRecord = <K extends Schema.Record.Key, V extends Schema.Top>(key: K, value: V, max: number) => {
  const members = Schema.Record(key, value)
  const decodeKey = Schema.decodeUnknownResult(key as unknown as Schema.Codec<unknown, unknown>)
  return envelope<Readonly<Record<K["Encoded"], V["Encoded"]>>>(isPlainObject, "object", members).check(
    Schema.makeFilter(
      (r: object) => {
        let n = 0
        for (const _ in r) if (++n > max) return `has more than ${max} keys; at most ${max} are allowed`
        // A key its schema refuses would otherwise be reported as an excess property: say what is wrong with it.
        const problems: Array<Schema.FilterIssue> = []
        for (const k of Object.keys(r)) {
          const decoded = decodeKey(k)
          if (Result.isFailure(decoded)) problems.push({ path: [k], issue: `key: ${keyProblem(decoded.failure)}` })
        }
        return problems
      },
      {
        expected: `an object of at most ${max} keys`,
        representation: sizeRepresentation("feedback/BoundedRecord", max, members),
        toJsonSchema: ({ schemas }) => ({ ...schemas[0]!, maxProperties: max })
      },
      true
    )
  ).pipe(Schema.decodeTo(members))
}
