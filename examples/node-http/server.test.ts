import { describe } from "vitest"
import { checkHost } from "../shared/HostChecks.ts"
import { startNodeHttpHost } from "./server.ts"

describe("the Admin API embedded in a node-http host", () => checkHost(startNodeHttpHost))
