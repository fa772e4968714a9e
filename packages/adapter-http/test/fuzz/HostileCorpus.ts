/**
 * The hostile values the fuzzer substitutes into generated requests (docs/DECISIONS.md §11), as data. Each entry has a
 * name so a failure report says which value broke which endpoint. Values that cannot be written as a plain JSON
 * value (10,000-level nesting, numbers outside the double range, duplicate keys) are `raw` JSON text, spliced into
 * the body verbatim by `toJsonText`.
 */

/** JSON text inserted verbatim where a value would go. */
export interface RawJson {
  readonly rawJson: string
}
export const raw = (rawJson: string): RawJson => ({ rawJson })
export const isRaw = (u: unknown): u is RawJson =>
  typeof u === "object" && u !== null && "rawJson" in u && typeof (u as RawJson).rawJson === "string"

export interface Hostile<A> {
  readonly name: string
  readonly value: A
}
const entries = <A>(record: Record<string, A>): ReadonlyArray<Hostile<A>> =>
  Object.entries(record).map(([name, value]) => ({ name, value }))

// Built once: the big ones are the point, and rebuilding them per request would only measure the harness.
const MB = "a".repeat(1_000_000)
const KB100 = "b".repeat(100_000)
const nestedArrays = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
const nestedObjects = (depth: number) => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)
const deepOr = (depth: number) => "{\"$or\":[".repeat(depth) + "{\"rating\":5}" + "]}".repeat(depth)
const manyIn = JSON.stringify({ rating: { $in: Array.from({ length: 10_000 }, (_, i) => i) } })
const manyClauses = JSON.stringify(Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`metadata.k${i}`, i])))
const base64url = (s: string) => Buffer.from(s, "utf8").toString("base64url")
/** Wide but shallow: within the byte limit of a 1 MiB body, as many values as fit. */
const wideArray = "[" + "0,".repeat(400_000) + "0]"
const wideObject = "{" + Array.from({ length: 60_000 }, (_, i) => `"k${i}":${i}`).join(",") + "}"
/** As many members as a 1 MiB body holds (short keys): each an unexpected key for the schema to report. */
const widestObject = "{" + Array.from({ length: 96_000 }, (_, i) => `"${i}":0`).join(",") + "}"
const csvCell = (text: string) => `"${text.replaceAll("\"", "\"\"")}"`

/** Strings: sizes, control and invisible characters, injection syntax, prototype names. */
export const hostileStrings: ReadonlyArray<Hostile<string>> = entries({
  "1 MB string": MB,
  "100 KB string": KB100,
  "NUL inside": "a\u0000b",
  "only NUL": "\u0000",
  "lone high surrogate": "x\ud800y",
  "lone low surrogate": "\udfff",
  "reversed surrogate pair": "\udc00\ud800",
  "RTL override": "\u202egnp.exe",
  "zero-width characters": "\u200b\u200c\u200d\ufeff",
  "combining marks": "e\u0301\u0301\u0301\u0301\u0301\u0301\u0301",
  "emoji": "😀👨‍👩‍👧‍👦",
  "SQL tautology": "' OR 1=1 --",
  "SQL placeholder": "$1",
  "SQL escaped NUL": "\\x00",
  "SQL statement": "'); DROP TABLE reviews; --",
  "LIKE wildcards": "%_%\\",
  "backslashes": "\\\\\\",
  "format string": "%s%s%s%n",
  "CRLF": "a\r\nX-Injected: 1",
  "empty": "",
  "whitespace": " \t\n ",
  "__proto__": "__proto__",
  "constructor": "constructor",
  "null as text": "null",
  "JSON as text": "{\"$where\":\"1\"}",
  "invalid date": "2026-02-31T25:61:61Z",
  "far-future date": "+275760-09-13T00:00:00.001Z",
  "URL javascript:": "javascript:alert(1)",
  "URL to metadata service": "http://169.254.169.254/latest/meta-data/",
  "email with NUL": "a\u0000@example.com",
  "long email": `${"a".repeat(5000)}@${"b".repeat(5000)}.com`,
  "quadratic email": "a".repeat(50_000) + "@",
  "dotted email": `a@${"a.".repeat(20_000)}com`
})

/** JSON values of every wrong type and odd size. */
export const hostileJson: ReadonlyArray<Hostile<unknown>> = entries<unknown>({
  "null": null,
  "true": true,
  "zero": 0,
  "negative": -1,
  "fraction": 1.5,
  "max double": 1.7976931348623157e308,
  "2^53 + 1": raw("9007199254740993"),
  "1e400": raw("1e400"),
  "-1e400": raw("-1e400"),
  "empty array": [],
  "empty object": {},
  "array of null": [null],
  "object for a string": { a: 1 },
  "array for an object": [{ a: 1 }],
  "10,000-level arrays": raw(nestedArrays(10_000)),
  "10,000-level objects": raw(nestedObjects(10_000)),
  "10,001 elements (one over the import cap)": Array.from({ length: 10_001 }, (_, i) => i),
  "10,000 keys": Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i])),
  "__proto__ key": raw("{\"__proto__\":{\"polluted\":true}}"),
  "NUL in a key": { "k\u0000": "v" },
  "NUL in a metadata key": { metadata: { "color\u0000": "red" } },
  "400,000-value array": raw(wideArray),
  "60,000-key object": raw(wideObject),
  "96,000-key object": raw(widestObject),
  "lone surrogate key": { "k\ud800": "v" },
  "duplicate keys": raw("{\"a\":1,\"a\":2}"),
  "filter $where": { $where: "sleep(10)" },
  "filter deep $or": raw(deepOr(10_000))
})

/** Whole bodies that are not the JSON document the endpoint expects. */
export const malformedBodies: ReadonlyArray<Hostile<string>> = entries({
  "unclosed object": "{",
  "truncated value": "{\"a\":",
  "unclosed array": "[1,2",
  "single quotes": "{'a':1}",
  "trailing comma": "{\"a\":1,}",
  "two documents": "{\"a\":1}{\"b\":2}",
  "BOM then object": "\ufeff{}",
  "NUL byte": "\u0000",
  "undefined": "undefined",
  "empty body": "",
  "lone surrogate escape": "{\"a\":\"\\ud800\"}",
  "NUL escape": "{\"a\":\"\\u0000\"}",
  "10,000-level arrays": nestedArrays(10_000),
  "10,000-level objects": nestedObjects(10_000),
  "2 MiB object": `{"a":"${"c".repeat(2 * 1024 * 1024)}"}`
})

/** Import files (`POST /import-jobs`) with their media types: hostile inside a row, where no JSON body check looks. */
export const hostileImportFiles: ReadonlyArray<Hostile<{ readonly contentType: string; readonly body: string }>> =
  entries({
    "CSV cell of JSON nested 5,000 deep": {
      contentType: "text/csv",
      body: `product,rating,metadata\np,5,${csvCell(nestedObjects(5_000))}\n`
    },
    "CSV cell of 5,000-level arrays": {
      contentType: "text/csv",
      body: `slug,title,metadata\np,P,${csvCell(nestedArrays(5_000))}\n`
    },
    "NDJSON line nested 5,000 deep": {
      contentType: "application/x-ndjson",
      body: `{"product":"p","rating":5,"metadata":${nestedObjects(5_000)}}\n`
    },
    "NUL in a metadata key (CSV)": {
      contentType: "text/csv",
      body: `product,rating,metadata\np,5,${csvCell(JSON.stringify({ "k\u0000": "v" }))}\n`
    },
    "NUL in a metadata key (NDJSON)": {
      contentType: "application/x-ndjson",
      body: `${JSON.stringify({ product: "p", rating: 5, metadata: { "k\u0000": "v" } })}\n`
    },
    "NDJSON line with a 5,000-key metadata": {
      contentType: "application/x-ndjson",
      body: `{"product":"p","rating":5,"metadata":{${
        Array.from({ length: 5_000 }, (_, i) => `"${i}":"v"`).join(",")
      }}}\n`
    },
    "wide NDJSON line": { contentType: "application/x-ndjson", body: `{"product":"p","x":${wideArray}}\n` },
    "CSV header only, duplicated column": { contentType: "text/csv", body: "product,product\np,q\n" }
  })

/** Content types other than `application/json` (and odd spellings of it). */
export const hostileContentTypes: ReadonlyArray<Hostile<string | undefined>> = entries<string | undefined>({
  "no content type": undefined,
  "text/plain": "text/plain",
  "form": "application/x-www-form-urlencoded",
  "multipart": "multipart/form-data; boundary=x",
  "xml": "application/xml",
  "json in UTF-16": "application/json; charset=utf-16",
  "upper-case json": "APPLICATION/JSON",
  "merge-patch": "application/merge-patch+json",
  "two types": "application/json, text/plain",
  "garbage": ";;;"
})

/** Path segments in place of an id: encoding garbage, traversal, wrong shapes. */
export const hostileSegments: ReadonlyArray<Hostile<string>> = entries({
  "lone percent": "%",
  "bad escape": "%zz",
  "encoded NUL": "%00",
  "invalid UTF-8": "%ff%fe",
  "overlong UTF-8": "%c0%af",
  "encoded RTL": "%e2%80%ae",
  "encoded traversal": "%2e%2e%2f%2e%2e%2f",
  "dot-dot": "..",
  "encoded slash": "a%2fb",
  "SQL": encodeURIComponent("' OR 1=1 --"),
  "braced uuid": "%7B0190a000-0000-7000-8000-000000000000%7D",
  "uuid without dashes": "0190a00000007000800000000000000",
  "nil uuid": "00000000-0000-0000-0000-000000000000",
  "100 KB segment": "d".repeat(100_000),
  "empty": ""
})

/** Values for query parameters, by parameter name; every other parameter draws from `hostileStrings`. */
export const hostileQueryValues: Readonly<Record<string, ReadonlyArray<Hostile<string>>>> = {
  limit: entries({
    "zero": "0",
    "negative": "-1",
    "fraction": "1.5",
    "over max": "251",
    "huge": "99999999999999999999999",
    "exponent": "1e3",
    "hex": "0x10",
    "NaN": "NaN",
    "Infinity": "Infinity",
    "padded": " 10 ",
    "suffix": "10abc",
    "empty": "",
    "negative zero": "-0"
  }),
  filter: entries({
    "$where": JSON.stringify({ $where: "sleep(10)" }),
    "$regex": JSON.stringify({ title: { $regex: ".*" } }),
    "10,000 $in values": manyIn,
    "10,000-level $or": deepOr(10_000),
    "500 clauses": manyClauses,
    "SQL in a field name": JSON.stringify({ "metadata.x' OR 1=1 --": 1 }),
    "SQL in a value": JSON.stringify({ title: "' OR 1=1 --" }),
    "NUL in a value": JSON.stringify({ title: "\u0000" }),
    "impossible date": JSON.stringify({ createdAt: { $gt: "2026-02-31T25:61:00Z" } }),
    "number out of range": "{\"rating\":{\"$gt\":1e400}}",
    "wrong value type": JSON.stringify({ rating: { $in: "5" } }),
    "empty $and": JSON.stringify({ $and: [] }),
    "$or of a non-array": JSON.stringify({ $or: { rating: 5 } }),
    "prototype key": "{\"__proto__\":{\"rating\":5}}",
    "constructor key": JSON.stringify({ constructor: { prototype: 1 } }),
    "array": "[]",
    "null": "null",
    "truncated": "{\"rating\":",
    "10,000-level arrays": nestedArrays(10_000),
    "upper-case uuid": JSON.stringify({ id: "0190A000-0000-7000-8000-00000000000A" })
  }),
  cursor: entries({
    "impossible date": base64url(
      JSON.stringify({ v: 1, b: "x", k: "2026-02-31T25:61:61Z", i: "0190a000-0000-7000-8000-000000000000", c: "0" })
    ),
    "year 0": base64url(JSON.stringify({ v: 1, k: "0000-00-00T00:00:00Z", i: "x" })),
    "wrong types": base64url(JSON.stringify({ v: "1", b: 1, k: { $gt: 1 }, i: [], c: null })),
    "JSON null": base64url("null"),
    "JSON array": base64url("[]"),
    "not JSON": base64url("not json"),
    "10,000-level arrays": base64url(nestedArrays(10_000)),
    "random base64": "q83vEjRWeJCrze8SNFZ4kA",
    "bad alphabet": "!!!!",
    "padding only": "====",
    "100 KB": base64url(KB100)
  }),
  sort: entries({
    "only dash": "-",
    "double dash": "--createdAt",
    "SQL": "createdAt; DROP TABLE reviews",
    "two fields": "rating,id",
    "prototype": "__proto__"
  }),
  include: entries({
    "repeated": "customer,customer,customer",
    "only commas": ",,,",
    "unknown": "everything",
    "100 KB": KB100
  })
}

/** Query-string shapes that are not one value per known parameter. */
export const hostileQueryShapes: ReadonlyArray<Hostile<string>> = entries({
  "unknown parameter": "publised=true",
  "prototype parameter": "__proto__=1",
  "bracket parameter": "filter%5B%24where%5D=1",
  "NUL in a name": "a%00b=1",
  "empty name": "=1",
  "bare name": "limit",
  "bad escape": "limit=%zz",
  "encoded NUL value": "search=%00",
  "1,000 parameters": Array.from({ length: 1000 }, (_, i) => `p${i}=${i}`).join("&")
})

/** Authorization header values that must all be a 401 (or the operator's own 401). */
export const hostileAuthorizations: ReadonlyArray<Hostile<string | undefined>> = entries<string | undefined>({
  "no header": undefined,
  "bare Bearer": "Bearer",
  "empty token": "Bearer ",
  "prefix only": "Bearer sk_",
  "Basic": "Basic dXNlcjpwYXNz",
  "100 KB token": `Bearer sk_${"e".repeat(100_000)}`,
  "SQL token": "Bearer sk_' OR 1=1 --",
  "lower-case scheme": "bearer sk_0000000000000000000000000000000000",
  "two tokens": "Bearer sk_a, Bearer sk_b"
})
