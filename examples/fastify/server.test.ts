import { describe } from "vitest"
import { checkHost } from "../shared/HostChecks.ts"
import { startFastifyHost } from "./server.ts"

describe("the Admin API embedded in a fastify host", () => checkHost(startFastifyHost, "/api", { echo: true }))
