import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Jobs } from "../src/index.ts"
import { makeProduct, makeReview } from "@feedback/testing"

describe("CSV cells become the import's row fields", () => {
  it("types the mapped columns and drops empty cells", () => {
    expect(Jobs.rowOfCsvRecord("reviews", {
      rating: "4",
      published: "FALSE",
      imageUrls: "[\"https://a.example/x.jpg\"]",
      metadata: "{\"k\":\"v\"}",
      title: "",
      body: "0042"
    })).toEqual({
      rating: 4,
      published: false,
      imageUrls: ["https://a.example/x.jpg"],
      metadata: { k: "v" },
      body: "0042"
    })
    expect(Jobs.rowOfCsvRecord("customers", { email: "a@example.com", emailOptOut: "true" })).toEqual({
      email: "a@example.com",
      emailOptOut: true
    })
  })
  it("leaves a cell that is not of its type as text, so the row's decoding names the field", () => {
    const row = Jobs.rowOfCsvRecord("reviews", { product: "mug", rating: "five", published: "yes", metadata: "{bad" })
    expect(row).toEqual({ product: "mug", rating: "five", published: "yes", metadata: "{bad" })
    const decoded = Jobs.decodeStagedRow("reviews", JSON.stringify(row))
    expect(decoded._tag).toBe("Invalid")
    expect((decoded as { message: string }).message).toMatch(/rating/)
  })
})

describe("exports", () => {
  it("CSV cells never start with a formula character, and an import reads every exported cell back as it was", () => {
    for (const text of ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "'=x", "''+x"]) {
      expect(Jobs.neutraliseFormula(text)).toBe(`'${text}`)
    }
    for (const text of ["a=1", "'quoted'", "''", "1", "", "{\"a\":1}"]) expect(Jobs.neutraliseFormula(text)).toBe(text)
    const unit = fc.constantFrom("=", "+", "-", "@", "\t", "\r", "'", "a", ",", "\"")
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 8 }), (text) => {
        expect(/^[=+\-@\t\r]/.test(Jobs.neutraliseFormula(text))).toBe(false)
        expect(Jobs.unneutraliseFormula(Jobs.neutraliseFormula(text))).toBe(text)
        expect(Jobs.rowOfCsvRecord("products", { title: Jobs.neutraliseFormula(text) })).toEqual(
          text === "" ? {} : { title: text }
        )
      }),
      { numRuns: 500 }
    )
    expect(Jobs.csvLine(["=cmd|' /C calc'!A0", -3, "ok"])).toBe("'=cmd|' /C calc'!A0,'-3,ok\r\n")
    expect(Jobs.rowOfCsvRecord("reviews", { rating: "'-3" })).toEqual({ rating: -3 })
  })

  it("an NDJSON row writes every export column, nulls included, and imports again", () => {
    const review = makeReview(makeProduct().id, { title: null, body: "=1", published: true })
    const line = Jobs.reviewExportLine("ndjson", review)
    const parsed = JSON.parse(line)
    expect(Object.keys(parsed)).toEqual(Jobs.REVIEW_EXPORT_COLUMNS)
    expect(parsed).toMatchObject({ title: null, body: "=1", pending: null, redactedAt: null })
    expect(Jobs.decodeStagedRow("reviews", line.replace("\"product\":null", "\"product\":\"mug\""))._tag).toBe("Row")
  })
})

describe("staged rows decode with the import's row schema", () => {
  it("accepts a valid row, ignores an export's extra review fields, refuses unknown fields and non-objects", () => {
    expect(Jobs.decodeStagedRow("products", "{\"slug\":\"a\",\"title\":\"A\"}")._tag).toBe("Row")
    expect(
      Jobs.decodeStagedRow("reviews", "{\"product\":\"a\",\"rating\":5,\"id\":\"x\",\"moderatedAt\":null,\"flags\":[]}")
        ._tag
    ).toBe("Row")
    const unknown = Jobs.decodeStagedRow("reviews", "{\"product\":\"a\",\"rating\":5,\"ratting\":1}")
    expect(unknown._tag).toBe("Invalid")
    expect((unknown as { message: string }).message).toMatch(/ratting/)
    expect(Jobs.decodeStagedRow("products", "[1]")._tag).toBe("Invalid")
    expect(Jobs.decodeStagedRow("products", "{oops")).toEqual({ _tag: "Invalid", message: "is not valid JSON" })
  })
  it("stageable text holds no raw NUL or lone surrogate, and decodes to the same value", () => {
    const unit = fc.constantFrom("\u0000", "\ud800", "\udc00", "\ud83d\ude00", "a", "é", " ")
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 20 }), (s) => {
        // Raw characters inside a JSON string, as a hostile NDJSON line would carry them.
        const text = Jobs.stageableText(`{"s":"${s}"}`)
        expect(/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)).toBe(false)
        expect(JSON.parse(text).s).toBe(s)
      }),
      { numRuns: 300 }
    )
  })
})

describe("progress", () => {
  it("counts every batch and lists at most the first 1,000 skipped rows", () => {
    fc.assert(fc.property(fc.array(fc.tuple(fc.nat(600), fc.nat(600)), { maxLength: 8 }), (batches) => {
      let state = { progress: Jobs.emptyProgress, skipped: [] as ReadonlyArray<{ index: number; message: string }> }
      let next = 0
      let imported = 0
      let skipped = 0
      for (const [ok, bad] of batches) {
        const list = Array.from({ length: bad }, () => ({ index: next++, message: "x" }))
        state = Jobs.advanceProgress(state.progress, state.skipped, {
          processed: ok + bad,
          imported: ok,
          skipped: list
        })
        imported += ok
        skipped += bad
      }
      expect(state.progress.importedRows).toBe(imported)
      expect(state.progress.skippedRows).toBe(skipped)
      expect(state.progress.processedRows).toBe(imported + skipped)
      expect(state.skipped.length).toBe(Math.min(skipped, Jobs.MAX_LISTED_SKIPPED))
      expect(state.skipped.map((s) => s.index)).toEqual(Array.from({ length: state.skipped.length }, (_, i) => i))
    }))
  })
})
