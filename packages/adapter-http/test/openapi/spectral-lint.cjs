// Runs Spectral's `spectral:oas` ruleset over the OpenAPI document read from stdin and prints the findings as JSON.
// A separate Node process: Spectral's dependency `nimma` fails to load inside Vitest's workers (an ES module helper
// export it expects is missing there), while plain Node loads its CommonJS build.
const { Document, Spectral } = require("@stoplight/spectral-core")
const { Json } = require("@stoplight/spectral-parsers")
const { oas } = require("@stoplight/spectral-rulesets")

let input = ""
process.stdin.setEncoding("utf8")
process.stdin.on("data", (chunk) => {
  input += chunk
})
process.stdin.on("end", async () => {
  const spectral = new Spectral()
  spectral.setRuleset(oas)
  const results = await spectral.run(new Document(input, Json, "openapi.json"))
  process.stdout.write(JSON.stringify(results.map((r) => ({
    rule: String(r.code),
    severity: r.severity,
    at: r.path.join("."),
    message: r.message
  }))))
})
