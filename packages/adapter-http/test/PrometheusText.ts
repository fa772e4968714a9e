/** Reading `GET /metrics` (the Prometheus text format) in tests. */

/** The value of one sample of the Prometheus text, or undefined when absent. */
export const sampleOf = (text: string, name: string, labels: Record<string, string> = {}): number | undefined => {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line)
    if (m === null || m[1] !== name) continue
    const got = Object.fromEntries(
      [...(m[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]])
    )
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4])
  }
  return undefined
}
