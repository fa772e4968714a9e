#!/usr/bin/env node
/**
 * The `feedback-admin-api` executable. The standalone server and `migrate` need peers an embedding host may leave out
 * (docs/DECISIONS.md §66), so they are checked first: a missing one is one line naming the install, not a stack.
 */
import { readFileSync } from "node:fs"

const needed = ["@effect/platform-node", "@feedback/adapter-postgres"]
const missing = needed.filter((name) => {
  try {
    import.meta.resolve(name)
    return false
  } catch {
    return true
  }
})
if (missing.length > 0) {
  console.error(`feedback-admin-api needs ${missing.join(" and ")}: npm install ${missing.join(" ")}`)
  process.exit(1)
}

const [{ NodeRuntime, NodeServices }, { Effect }, { Command }, { teardown }, { cli }] = await Promise.all([
  import("@effect/platform-node"),
  import("effect"),
  import("effect/cli"),
  import("../main.ts"),
  import("./Cli.ts")
])

// Two levels below the package root both as src/cli/bin.ts and as dist/cli/bin.js.
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string
}

cli.pipe(
  Command.run({ version }),
  Effect.provide(NodeServices.layer),
  // Command.run already printed a handler's message; the exit code is what is left to say.
  (program) => NodeRuntime.runMain(program, { teardown, disableErrorReporting: true })
)
