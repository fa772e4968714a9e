import { describe } from "vitest"
import { checkHost } from "../shared/HostChecks.ts"
import { startExpressHost } from "./server.ts"

describe("the Admin API embedded in a express host", () =>
  checkHost(startExpressHost, "/api", { echo: true, parsesFirst: true }))
