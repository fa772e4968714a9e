/**
 * The `Questions` namespace of `@feedback/core`: what the questions capability offers hosts and adapters.
 */
export * from "./EmailNoticeWorker.ts"
export * from "./EmailOutbox.ts"
export * from "./Mailer.ts"
export * from "./ProductQuestion.ts"
export * from "./ProductQuestionLists.ts"
export * from "./ProductQuestionNotice.ts"
export * from "./ProductQuestionRepository.ts"
export * from "./ProductQuestionRequests.ts"
export * from "./ProductQuestions.ts"
