import { runStoreConformance } from "@feedback/core/testing"
import { MemoryStoreLayer } from "../src/MemoryStore.ts"

runStoreConformance("memory", MemoryStoreLayer)
