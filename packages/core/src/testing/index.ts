export * from "./StoreConformance.ts"
export * from "./StoreTestSupport.ts"
export * from "./RecordingMailer.ts"
