export * from "./StoreConformance.ts"
export * from "./StoreTestKit.ts"
export * from "../questions/RecordingMailer.ts"
export * from "./CursorFixtures.ts"
