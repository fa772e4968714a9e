/**
 * `npm run bench -- <name> [args…]` runs `bench/<name>.ts` in a fresh Node process (the same Node as this one).
 * Without a name it lists the benchmarks.
 */
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import * as Path from "node:path"

const dir = import.meta.dirname
const available = readdirSync(dir)
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && f !== "run.ts")
  .map((f) => f.slice(0, -3))
  .sort()

const [name, ...args] = process.argv.slice(2)
if (name === undefined || !available.includes(name)) {
  if (name !== undefined) console.error(`no benchmark named "${name}"`)
  console.error(`usage: npm run bench -- <name> [args]\navailable: ${available.join(", ")}\nsee bench/README.md`)
  process.exit(name === undefined ? 0 : 1)
}
const result = spawnSync(process.execPath, [Path.join(dir, `${name}.ts`), ...args], { stdio: "inherit" })
process.exit(result.status ?? 1)
