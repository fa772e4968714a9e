#!/usr/bin/env node
/** The `feedback-admin-api` executable. */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Effect } from "effect"
import { Command } from "effect/cli"
import { readFileSync } from "node:fs"
import { teardown } from "../main.ts"
import { cli } from "./Cli.ts"

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
