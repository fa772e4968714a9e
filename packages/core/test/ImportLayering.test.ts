/**
 * The core's layering, read from its source files (docs/ARCHITECTURE.md): `kernel/` imports no capability, no
 * module imports the package root (`CoreLayer`, `StoreServices`, the entry), nothing imports a test library or the
 * test kit, and there is no import cycle, so no import runs back up.
 */
import { readdirSync, readFileSync } from "node:fs"
import * as Path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "..")
const src = Path.join(root, "src")

/** Every module of `src`, by its path under `src` (`kernel/Ids.ts`), with what it imports. */
type ImportGraph = ReadonlyMap<string, ReadonlyArray<string>>

/** A relative specifier as a path under `src`; a package name as it is written. */
const resolve = (from: string, specifier: string): string =>
  specifier.startsWith(".") ? Path.posix.normalize(Path.posix.join(Path.posix.dirname(from), specifier)) : specifier

const readGraph = (dir: string): ImportGraph =>
  new Map(
    readdirSync(dir, { recursive: true })
      .map((file) => String(file).split(Path.sep).join("/"))
      .filter((file) => file.endsWith(".ts"))
      .sort()
      .map((file) => [
        file,
        ts.preProcessFile(readFileSync(Path.join(dir, file), "utf8"), true, true).importedFiles.map((i) =>
          resolve(file, i.fileName)
        )
      ])
  )

const folderOf = (module: string): string | undefined => module.includes("/") ? module.split("/")[0] : undefined

/** `[module, import]` pairs for which `bad` holds. */
const offending = (graph: ImportGraph, bad: (module: string, imported: string) => boolean) =>
  [...graph].flatMap(([module, imports]) => imports.filter((i) => bad(module, i)).map((i) => [module, i]))

/** The import cycles of `graph`: its strongly connected components of more than one module, or a self-import. */
const cyclesOf = (graph: ImportGraph): ReadonlyArray<ReadonlyArray<string>> => {
  let next = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const cycles: Array<Array<string>> = []
  const visit = (module: string) => {
    index.set(module, next)
    low.set(module, next++)
    stack.push(module)
    for (const imported of graph.get(module) ?? []) {
      if (!graph.has(imported)) continue
      if (!index.has(imported)) {
        visit(imported)
        low.set(module, Math.min(low.get(module)!, low.get(imported)!))
      } else if (stack.includes(imported)) low.set(module, Math.min(low.get(module)!, index.get(imported)!))
    }
    if (low.get(module) !== index.get(module)) return
    const component = stack.splice(stack.indexOf(module))
    if (component.length > 1 || graph.get(module)!.includes(module)) cycles.push(component.sort())
  }
  for (const module of graph.keys()) if (!index.has(module)) visit(module)
  return cycles
}

const kernelImportsCapability = (module: string, imported: string) =>
  folderOf(module) === "kernel" && imported.endsWith(".ts") && folderOf(imported) !== "kernel"
const importsPackageRoot = (module: string, imported: string) =>
  folderOf(module) !== undefined && imported.endsWith(".ts") && folderOf(imported) === undefined
/** A capability's `index.ts` is its namespace for importers outside the core; core modules import by path. */
const importsNamespace = (_module: string, imported: string) => /(^|\/)index\.ts$/.test(imported)
const TEST_LIBRARIES = ["vitest", "@effect/vitest", "fast-check", "@feedback/testing"]
const importsTestSupport = (_module: string, imported: string) =>
  TEST_LIBRARIES.some((library) => imported === library || imported.startsWith(`${library}/`)) ||
  /(^|\/)testing\//.test(imported)

describe("the core's import layering", () => {
  const graph = readGraph(src)

  it("reads every module and its imports", () => {
    expect(graph.get("CoreLayer.ts")).toContain("effect")
    expect(graph.get("StoreServices.ts")).toContain("kernel/UnitOfWork.ts")
    expect(graph.get("organizations/Organizations.ts")).toContain("kernel/Caller.ts")
  })

  it("kernel/ imports no capability", () => {
    expect(offending(graph, kernelImportsCapability)).toEqual([])
  })

  it("no module in a folder imports the package root (CoreLayer, StoreServices, the entry)", () => {
    expect(offending(graph, importsPackageRoot)).toEqual([])
  })

  it("no module imports a capability namespace (an index.ts): core modules import each other by path", () => {
    expect(offending(graph, importsNamespace)).toEqual([])
  })

  it("the entry exports the root composition and one namespace per capability folder, nothing else", () => {
    const folders = [...new Set([...graph.keys()].map(folderOf).filter((f) => f !== undefined))].sort()
    const entry = [...readFileSync(Path.join(src, "index.ts"), "utf8").matchAll(/from "\.\/([^"]+)"/g)].map((m) => m[1])
    expect(entry.sort()).toEqual(
      ["CoreLayer.ts", "StoreServices.ts", ...folders.map((f) => `${f}/index.ts`)].sort()
    )
  })

  it("has no import cycle", () => {
    expect(cyclesOf(graph)).toEqual([])
  })

  it("production code only: no test library, no test kit", () => {
    expect(offending(graph, importsTestSupport)).toEqual([])
    const manifest = JSON.parse(readFileSync(Path.join(root, "package.json"), "utf8"))
    expect(Object.keys(manifest.exports)).not.toContain("./testing")
    for (const library of TEST_LIBRARIES) {
      expect(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies })).not.toContain(library)
    }
  })

  it("each check finds what it looks for", () => {
    const bad: ImportGraph = new Map([
      ["kernel/Ids.ts", ["reviews/Review.ts"]],
      ["reviews/Review.ts", ["kernel/Ids.ts", "CoreLayer.ts", "@effect/vitest"]],
      ["CoreLayer.ts", ["reviews/Review.ts"]],
      ["setup/Setup.ts", ["../testing/StoreTestKit.ts", "effect", "reviews/index.ts"]]
    ])
    expect(offending(bad, kernelImportsCapability)).toEqual([["kernel/Ids.ts", "reviews/Review.ts"]])
    expect(offending(bad, importsPackageRoot)).toEqual([["reviews/Review.ts", "CoreLayer.ts"]])
    expect(cyclesOf(bad)).toEqual([["CoreLayer.ts", "kernel/Ids.ts", "reviews/Review.ts"]])
    expect(offending(bad, importsNamespace)).toEqual([["setup/Setup.ts", "reviews/index.ts"]])
    expect(offending(bad, importsTestSupport)).toEqual([
      ["reviews/Review.ts", "@effect/vitest"],
      ["setup/Setup.ts", "../testing/StoreTestKit.ts"]
    ])
  })
})
