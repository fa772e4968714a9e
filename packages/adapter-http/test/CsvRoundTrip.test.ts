/** What the core writes as a CSV line, the import's parser (csv-parse) reads back exactly (RFC 4180 quoting). */
import { csvLine } from "@feedback/core"
import { parse } from "csv-parse/sync"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

describe("export CSV lines parse back with the import's parser", () => {
  it("any text fields, commas, quotes and line breaks included", () => {
    fc.assert(fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 6 }), (fields) => {
      const [record] = parse(csvLine(fields), { relax_column_count: false }) as Array<Array<string>>
      expect(record).toEqual(fields)
    }))
  })
})
