/**
 * Runs one benchmark: `npm run bench -- <name>` runs `bench/<name>.ts`, whose default export is `main(args)`.
 * Without a name (or with an unknown one) it lists the benchmarks there are.
 */
import { readdirSync } from "node:fs"
import { fileURLToPath } from "node:url"

const dir = fileURLToPath(new URL(".", import.meta.url))
const available = readdirSync(dir).filter((f) => f.endsWith(".ts") && f !== "run.ts").map((f) => f.slice(0, -3)).sort()
const [name, ...args] = process.argv.slice(2)

if (name === undefined || !available.includes(name)) {
  console.error(`${name === undefined ? "Name a benchmark" : `No benchmark "${name}"`}: npm run bench -- <name>`)
  console.error(`Available: ${available.join(", ")}`)
  process.exit(2)
}

const module = (await import(new URL(`./${name}.ts`, import.meta.url).href)) as {
  readonly default: (args: ReadonlyArray<string>) => Promise<void>
}
await module.default(args)
