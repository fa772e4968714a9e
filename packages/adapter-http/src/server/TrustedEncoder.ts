/**
 * A response encoder compiled once from a schema, for values the API built itself (a page of reviews read from the
 * store). HttpApi encodes every success through the schema interpreter, which re-checks every id and timestamp and
 * rebuilds every object step by step, which costs more than reading the page (docs/DECISIONS.md §26). This
 * encoder gives the same JSON the schema gives for every value of the schema's
 * type (TrustedEncoder.test.ts checks that on arbitrary values): declared keys only, in declaration order, absent
 * optional keys left out, records copied. It does not re-validate the values, which the stores and use-cases
 * produce from already-decoded input.
 *
 * Only shapes whose encoding is the identity are compiled (structs, records, arrays, `NullOr`, primitives and
 * literals, with checks and brands and passthrough transformations such as the lower-casing of ids); any other part
 * (a real transformation, a declaration, a recursive schema) is encoded by the schema itself.
 */
import { Effect, Schema, SchemaAST, SchemaGetter } from "effect"
import { HttpServerResponse } from "effect/http"

type Encode = (value: unknown) => unknown

const identity: Encode = (value) => value

const passthrough = SchemaGetter.passthrough()

/** Whether every link of the node's encoding passes the value through unchanged to a node that does too. */
const encodesAsItself = (ast: SchemaAST.AST): boolean =>
  ast.encoding === undefined ||
  ast.encoding.every((link) =>
    link.transformation._tag === "Transformation" && link.transformation.encode === passthrough && isLeaf(link.to)
  )

/** Scalars JSON holds as they are. */
const isLeaf = (ast: SchemaAST.AST): boolean => {
  switch (ast._tag) {
    case "String":
    case "Number":
    case "Boolean":
    case "Null":
    case "Literal":
    case "Enum":
    case "TemplateLiteral":
      return encodesAsItself(ast)
    case "Union":
      return encodesAsItself(ast) && ast.types.every(isLeaf)
    default:
      return false
  }
}

const bySchema = (ast: SchemaAST.AST): Encode => Schema.encodeUnknownSync(Schema.make<Schema.Codec<unknown>>(ast))

const compile = (ast: SchemaAST.AST): Encode => {
  if (isLeaf(ast)) return identity
  if (ast.encoding !== undefined) return bySchema(ast)
  switch (ast._tag) {
    case "Objects":
      return compileObjects(ast)
    case "Arrays": {
      if (ast.elements.length > 0 || ast.rest.length !== 1) return bySchema(ast)
      const item = compile(ast.rest[0]!)
      return item === identity ? identity : (value) => (value as ReadonlyArray<unknown>).map(item)
    }
    case "Union": {
      // `NullOr(X)`: null as it is, anything else as X.
      const others = ast.types.filter((t) => t._tag !== "Null")
      if (others.length !== 1 || others[0]!._tag === "Literal") return bySchema(ast)
      const member = compile(others[0]!)
      return (value) => (value === null ? null : member(value))
    }
    default:
      return bySchema(ast)
  }
}

const compileObjects = (ast: SchemaAST.Objects): Encode => {
  const index = ast.indexSignatures
  // A record of string keys (`metadata`): every own key, each value as the index signature's type.
  if (
    ast.propertySignatures.length === 0 && index.length === 1 && index[0]!.parameter._tag === "String" &&
    index[0]!.parameter.checks === undefined
  ) {
    const item = compile(index[0]!.type)
    return (value) => {
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(value as object)) {
        const v = item((value as Record<string, unknown>)[key])
        // A metadata key named `__proto__` is data: assigning it would set the prototype instead.
        if (key === "__proto__") {
          Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true })
        } else out[key] = v
      }
      return out
    }
  }
  // A declared `__proto__` would set the prototype in the object literal below: left to the schema.
  if (index.length > 0 || ast.propertySignatures.some((p) => typeof p.name !== "string" || p.name === "__proto__")) {
    return bySchema(ast)
  }
  const fields = ast.propertySignatures.map((p) => ({
    key: JSON.stringify(p.name),
    optional: SchemaAST.isOptional(p.type),
    encode: compile(p.type)
  }))
  // Straight-line code with constant keys, compiled once per struct: a loop over the field list would make every
  // property access a dictionary lookup. The fields before the first optional one form an object literal; the
  // rest are assigned in declaration order, so the keys come out in the schema's order. The keys are the schema's
  // own names, quoted by JSON.stringify.
  const read = (f: typeof fields[number], i: number) => f.encode === identity ? `v[${f.key}]` : `e[${i}](v[${f.key}])`
  const firstOptional = fields.findIndex((f) => f.optional)
  const literal = firstOptional === -1 ? fields.length : firstOptional
  const lines = [
    `const o = {${fields.slice(0, literal).map((f, i) => `${f.key}: ${read(f, i)}`).join(", ")}}`,
    ...fields.slice(literal).map((f, j) => {
      const assign = `o[${f.key}] = ${read(f, literal + j)}`
      return f.optional ? `if (Object.hasOwn(v, ${f.key})) ${assign}` : assign
    }),
    "return o"
  ]
  const make = new Function("e", `return (v) => {\n${lines.join("\n")}\n}`) as (e: ReadonlyArray<Encode>) => Encode
  return make(fields.map((f) => f.encode))
}

/** The encoder of `schema`'s values to their JSON form (see the module comment). */
export const trustedEncoder = <S extends Schema.Top>(schema: S): (value: S["Type"]) => S["Encoded"] =>
  compile(schema.ast) as (value: S["Type"]) => S["Encoded"]

/** A 200 JSON response of `value`, as HttpApi would answer it for a success of `schema`. */
export const trustedJsonResponse = <S extends Schema.Top>(schema: S) => {
  const encode = trustedEncoder(schema)
  return (value: S["Type"]): HttpServerResponse.HttpServerResponse =>
    HttpServerResponse.text(JSON.stringify(encode(value)), { status: 200, contentType: "application/json" })
}

/** Records of a page encoded and written at once; the fiber yields between such runs. */
export const RECORDS_PER_SLICE = 25

const utf8 = new TextEncoder()

/**
 * A 200 JSON response of a page (`pageOf(record)`: `data` and `nextCursor`), the very text `trustedJsonResponse`
 * gives, its records encoded to UTF-8 a run at a time with a yield between: a page of 250 records with every
 * include is megabytes of JSON, and many such lists at once would otherwise hold the event loop together
 * (docs/DECISIONS.md §69). The body is bytes, so writing it to the socket converts nothing in one piece.
 */
export const trustedPageResponse = <S extends Schema.Top>(record: S) => {
  const encode = trustedEncoder(record)
  return (page: { readonly data: ReadonlyArray<S["Type"]>; readonly nextCursor: string | null }) =>
    Effect.gen(function*() {
      const parts: Array<Uint8Array> = [utf8.encode(`{"data":[`)]
      for (let from = 0; from < page.data.length; from += RECORDS_PER_SLICE) {
        if (from > 0) yield* Effect.yieldNow
        const run = JSON.stringify(page.data.slice(from, from + RECORDS_PER_SLICE).map(encode)).slice(1, -1)
        parts.push(utf8.encode(from > 0 ? `,${run}` : run))
      }
      parts.push(utf8.encode(`],"nextCursor":${JSON.stringify(page.nextCursor)}}`))
      const body = new Uint8Array(parts.reduce((n, part) => n + part.length, 0))
      let at = 0
      for (const part of parts) {
        body.set(part, at)
        at += part.length
      }
      return HttpServerResponse.uint8Array(body, { status: 200, contentType: "application/json" })
    })
}

/**
 * A 200 JSON response of `value` encoded by `schema` itself (every check run, a failure thrown as HttpApi's encoding
 * would fail), its text kept per value: for an immutable value the store hands out again and again (an organization
 * on the memory store), each later answer reuses the text. A value is never changed in place (records are replaced
 * on update), so a kept text is always that value's encoding; a value that fails is not kept and fails every time.
 */
export const encodedOnceJsonResponse = <S extends Schema.Top>(schema: S) => {
  const encode = Schema.encodeUnknownSync(schema as unknown as Schema.Codec<S["Type"], S["Encoded"]>)
  const texts = new WeakMap<object, string>()
  return (value: S["Type"] & object): HttpServerResponse.HttpServerResponse => {
    let text = texts.get(value)
    if (text === undefined) {
      text = JSON.stringify(encode(value))
      texts.set(value, text)
    }
    return HttpServerResponse.text(text, { status: 200, contentType: "application/json" })
  }
}
