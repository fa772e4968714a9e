/**
 * Packages a host installs only for the features it uses (docs/DECISIONS.md §66): optional peer dependencies, loaded
 * on first use. When one is absent the feature fails with a defect that names the package and the feature, never
 * with Node's bare "Cannot find package", and a host that does not use the feature never loads it.
 */
import { Effect } from "effect"

/** Whether `error` is Node's answer to importing `name` when it is not installed. */
export const isMissingPackage = (error: unknown, name: string): boolean => {
  const e = error as { readonly code?: unknown; readonly message?: unknown } | null
  return (e?.code === "ERR_MODULE_NOT_FOUND" || e?.code === "MODULE_NOT_FOUND") &&
    typeof e.message === "string" && e.message.includes(`'${name}'`)
}

/** The defect of a feature whose optional package is not installed. */
export class MissingPackage extends Error {
  readonly packageName: string
  constructor(packageName: string, feature: string) {
    super(`${feature} needs the package ${packageName}, which this host has not installed: npm install ${packageName}`)
    this.name = "MissingPackage"
    this.packageName = packageName
  }
}

/**
 * The module `load` imports (`() => import("name")`, written out so bundlers and type checkers see it), or a
 * `MissingPackage` defect naming `feature` when `name` is not installed; any other failure stays the defect it is.
 */
export const optionalPackage = <A>(name: string, feature: string, load: () => Promise<A>): Effect.Effect<A> =>
  Effect.tryPromise({ try: load, catch: (error) => error }).pipe(
    Effect.catch((error) => Effect.die(isMissingPackage(error, name) ? new MissingPackage(name, feature) : error))
  )
