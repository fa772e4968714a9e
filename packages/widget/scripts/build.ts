/**
 * Bundles the widget (`src/embed.ts`) into `bundle/embed.js`, the one file the API serves at
 * `GET /storefront/embed.js`: esbuild, one IIFE, minified, for browsers of the last few years. The bundle is
 * committed, so the server needs no bundler at run time; `test/Bundle.test.ts` fails when it is stale.
 *
 *   npm run build:bundle -w packages/widget
 */
import { build } from "esbuild"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
export const bundlePath = Path.join(root, "bundle", "embed.js")

/** The bundle's text, built in memory (deterministic for one esbuild version). */
export const bundle = async (): Promise<string> => {
  const result = await build({
    entryPoints: [Path.join(root, "src", "embed.ts")],
    bundle: true,
    write: false,
    format: "iife",
    minify: true,
    target: ["chrome100", "firefox100", "safari15.4", "edge100"],
    charset: "utf8",
    legalComments: "none",
    logLevel: "silent"
  })
  const [file] = result.outputFiles
  if (file === undefined) throw new Error("esbuild wrote no file")
  return file.text
}

if (import.meta.main) {
  const text = await bundle()
  writeFileSync(bundlePath, text)
  console.log(`${Path.relative(process.cwd(), bundlePath)}: ${text.length} bytes`)
}
