/**
 * Every text the widget shows, in one object a page replaces in part (`window.feedbackWidget = { messages: {…} }`
 * before the script, docs/WIDGET.md). `{name}` marks a value filled in when the text is shown.
 */
export const defaultMessages = {
  reviewsHeading: "Customer reviews",
  average: "{average} out of 5",
  reviewCountOne: "Based on 1 review",
  reviewCountOther: "Based on {count} reviews",
  noReviews: "No reviews yet. Be the first to write one.",
  starsLabel: "Rated {rating} out of 5",
  starsWithCount: "Rated {rating} out of 5, {count} reviews",
  noRating: "No reviews yet",
  histogramRow: "{star} stars: {count} reviews",
  filteringBy: "Showing {star}-star reviews only.",
  showAll: "Show all reviews",
  sortLabel: "Sort reviews",
  sortNewest: "Newest",
  sortOldest: "Oldest",
  sortHighest: "Highest rated",
  sortLowest: "Lowest rated",
  verifiedBuyer: "Verified buyer",
  responseFrom: "Response from {name}",
  moreReviews: "Show more reviews",
  loading: "Loading…",
  loadError: "Reviews could not be loaded.",
  writeReview: "Write a review",
  yourRating: "Your rating",
  starOption: "{star} stars",
  starOptionOne: "1 star",
  reviewTitle: "Title",
  reviewBody: "Your review",
  authorName: "Your name",
  email: "Your email",
  reviewingAs: "Reviewing as {email}",
  submitReview: "Submit review",
  cancel: "Cancel",
  sending: "Sending…",
  reviewPublished: "Thank you! Your review is published.",
  reviewPending: "Thank you! Your review will appear once it has been checked.",
  ratingRequired: "Choose a rating from 1 to 5 stars.",
  fieldRequired: "Fill in this field.",
  emailInvalid: "Enter an email address like name@example.com.",
  submitError: "Something went wrong. Please try again.",
  tooMany: "Too many submissions from here. Please try again later.",
  yourReviews: "Your reviews",
  pending: "Awaiting moderation",
  published: "Published",
  questionsHeading: "Questions and answers",
  noQuestions: "No questions yet.",
  askQuestion: "Ask a question",
  question: "Your question",
  askerName: "Your name (optional)",
  askerEmail: "Your email, to hear when it is answered (optional)",
  submitQuestion: "Submit question",
  questionThanks: "Thank you! Your question will appear once it is answered.",
  moreQuestions: "Show more questions",
  askedBy: "Asked by {name}",
  storeAnswer: "Store answer",
  answerBy: "Answer by {name}",
  surveyHeading: "How was your order, {name}?",
  surveyHeadingAnonymous: "How was your order?",
  surveyIntro: "Rate the products you received. Reviews help other shoppers.",
  surveyReviewed: "Reviewed. Thank you!",
  surveyProductRating: "Your rating of {product}",
  surveySubmit: "Send my reviews",
  surveyThanks: "Thank you for your reviews!",
  surveyDone: "You have reviewed every product of this order. Thank you!",
  surveyMissing: "This review link has expired or is not valid.",
  surveyNothingRated: "Rate at least one product."
}

export type Messages = typeof defaultMessages
export type MessageKey = keyof Messages

/** The message with `{name}` placeholders filled in; unknown placeholders stay as they are. */
export const format = (text: string, values: Record<string, string | number> = {}): string =>
  text.replace(/\{(\w+)\}/g, (whole, name: string) => name in values ? String(values[name]) : whole)

/** The defaults with a page's replacements: only known keys with string values are taken. */
export const withOverrides = (overrides: unknown): Messages => {
  const messages = { ...defaultMessages }
  if (typeof overrides === "object" && overrides !== null) {
    for (const [key, value] of Object.entries(overrides)) {
      if (key in messages && typeof value === "string") messages[key as MessageKey] = value
    }
  }
  return messages
}
