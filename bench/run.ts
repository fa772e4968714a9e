/**
 * `npm run bench -- <name>`: runs `bench/<name>.ts`. Each benchmark prints its figures as ratios against a
 * baseline measured in the same run, so results compare across machines.
 */
import { readdirSync } from "node:fs"
import { fileURLToPath, pathToFileURL } from "node:url"
import * as Path from "node:path"

const dir = Path.dirname(fileURLToPath(import.meta.url))
const available = readdirSync(dir).filter((f) => f.endsWith(".ts") && f !== "run.ts").map((f) => f.slice(0, -3)).sort()
const name = process.argv[2]

if (name === undefined || !available.includes(name)) {
  process.stderr.write(`usage: npm run bench -- <name>\navailable: ${available.join(", ") || "(none)"}\n`)
  process.exit(name === undefined ? 0 : 1)
}
await import(pathToFileURL(Path.join(dir, `${name}.ts`)).href)
