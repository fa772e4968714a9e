import { describe } from "vitest"
import { checkHost } from "../shared/HostChecks.ts"
import { startHonoHost } from "./server.ts"

describe("the Admin API embedded in a hono host", () => checkHost(startHonoHost, "/api", { echo: true }))
