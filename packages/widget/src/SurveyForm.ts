/**
 * `data-feedback-widget="survey"` with `data-token`: the review form of a survey (shared DECISIONS §18, §19), one
 * rating per product of the order, on the hosted page `/r/{token}`, which names the organization's publishable key.
 * Products already reviewed are shown as done; the rest are sent in one request.
 */
import { append, h, replace } from "./Dom.ts"
import { field, statusRegion, submissionProblem, validate } from "./Forms.ts"
import { format, type Messages } from "./Messages.ts"
import { starsInput } from "./Stars.ts"
import { ApiError, idempotencyKey, type StorefrontClient, type Survey } from "./StorefrontClient.ts"

export const surveyForm = (root: ShadowRoot, client: StorefrontClient, messages: Messages, token: string): void => {
  const container = h("section", { "aria-label": messages.surveyHeadingAnonymous }, h("p", {}, messages.loading))
  append(root, container)
  const path = `/storefront/surveys/${encodeURIComponent(token)}`
  client.get<Survey>(path).then((survey) => render(survey), (error: unknown) => {
    replace(
      container,
      h("h2", {}, messages.surveyHeadingAnonymous),
      h(
        "p",
        { role: "alert" },
        error instanceof ApiError && error.status === 404 ? messages.surveyMissing : messages.loadError
      )
    )
  })

  const render = (survey: Survey) => {
    const heading = survey.customer.firstName === null || survey.customer.firstName === ""
      ? messages.surveyHeadingAnonymous
      : format(messages.surveyHeading, { name: survey.customer.firstName })
    const open = survey.products.filter((p) => !p.reviewed)
    if (open.length === 0) {
      replace(container, h("h2", {}, heading), h("p", { role: "status" }, messages.surveyDone))
      return
    }
    const problem = h("p", { class: "error", hidden: true })
    const entries = survey.products.map((p) => {
      const image = p.imageUrl === null ? h("span", {}) : h("img", { src: p.imageUrl, alt: "", width: 64, height: 64 })
      if (p.reviewed) {
        return {
          product: p,
          element: h(
            "div",
            { class: "product" },
            image,
            h("div", {}, h("h3", {}, p.title), h("p", { class: "meta" }, messages.surveyReviewed))
          )
        }
      }
      const rating = starsInput(messages, format(messages.surveyProductRating, { product: p.title }), () => {
        problem.hidden = true
      })
      const title = field(messages.reviewTitle, { maxLength: 500 })
      const body = field(messages.reviewBody, { multiline: true, maxLength: 20_000 })
      return {
        product: p,
        rating,
        title,
        body,
        element: h(
          "div",
          { class: "product" },
          image,
          h("h3", {}, p.title),
          rating.element,
          title.element,
          body.element
        )
      }
    })
    const name = field(messages.authorName, {
      required: true,
      maxLength: 100,
      autocomplete: "name",
      value: survey.customer.firstName ?? ""
    })
    const status = statusRegion()
    const submit = h("button", { type: "submit", class: "primary" }, messages.surveySubmit)
    const key = idempotencyKey()
    const form = h(
      "form",
      { novalidate: true, "aria-label": heading },
      h("p", {}, messages.surveyIntro),
      entries.map((e) => e.element),
      name.element,
      problem,
      h("div", { class: "actions" }, submit),
      status
    )
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      if (!validate(messages, [name])) return
      const reviews = entries.flatMap((e) =>
        e.rating === undefined || e.rating.value() === 0 ? [] : [{
          productId: e.product.id,
          rating: e.rating.value(),
          ...(e.title.value() === "" ? {} : { title: e.title.value() }),
          ...(e.body.value() === "" ? {} : { body: e.body.value() })
        }]
      )
      if (reviews.length === 0) {
        problem.textContent = messages.surveyNothingRated
        problem.hidden = false
        entries.find((e) => e.rating !== undefined)?.rating?.focus()
        return
      }
      problem.hidden = true
      submit.disabled = true
      status.textContent = messages.sending
      client.post(`${path}/reviews`, { reviews, authorName: name.value() }, key).then(() => {
        replace(container, h("h2", {}, heading), h("p", { class: "status", role: "status" }, messages.surveyThanks))
      }, (error: unknown) => {
        submit.disabled = false
        status.textContent = submissionProblem(messages, error)
      })
    })
    replace(container, h("h2", {}, heading), form)
  }
}
