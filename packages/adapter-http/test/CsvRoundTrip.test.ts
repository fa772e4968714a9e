/**
 * What the core writes as a CSV line, the import's parser (csv-parse) reads back exactly (RFC 4180 quoting), once the
 * import has taken off the formula escape (docs/JOBS.md); no cell a spreadsheet reads starts a formula.
 */
import { Jobs } from "@feedback/core"
import { parse } from "csv-parse/sync"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

describe("export CSV lines parse back with the import's parser", () => {
  it("any text fields, commas, quotes, line breaks and formulas included", () => {
    const formulaish = fc.string({ unit: fc.constantFrom("=", "+", "-", "@", "\t", "\r", "'", "a", ",", "\"", "\n") })
    fc.assert(fc.property(fc.array(fc.oneof(fc.string(), formulaish), { minLength: 1, maxLength: 6 }), (fields) => {
      const [record] = parse(Jobs.csvLine(fields), { relax_column_count: false }) as Array<Array<string>>
      expect(record!.filter((cell) => /^[=+\-@\t\r]/.test(cell))).toEqual([])
      expect(record!.map(Jobs.unneutraliseFormula)).toEqual(fields)
    }))
  })
})
