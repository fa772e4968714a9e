export * from "./StoreConformance.ts"
export * from "./QuestionTestSeed.ts"
export * from "./RecordingMailer.ts"
export * from "./SetupTestSeed.ts"
