export * from "./ApiServer.ts"
export * from "./DemoSeed.ts"
export * from "./StoreSelection.ts"
export * from "./SmtpMailer.ts"
