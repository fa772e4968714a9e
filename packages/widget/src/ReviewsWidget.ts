/**
 * `data-feedback-widget="reviews"` (shared DECISIONS §19): the rating summary with its histogram (a row filters the
 * list by that star), the published reviews a page at a time with their published replies and verified-buyer badges,
 * the review form, the signed shopper's own reviews, and the questions. The summary comes from the page's one
 * ratings request, which the stars elements share.
 */
import { append, h, replace } from "./Dom.ts"
import { format, type Messages } from "./Messages.ts"
import { questionsSection } from "./Questions.ts"
import { type ProductRef, reviewForm } from "./ReviewForm.ts"
import { ratingLabel, roundedRating, starsImage } from "./Stars.ts"
import type { CustomerReview, ProductRating, StorefrontClient, StorefrontReview } from "./StorefrontClient.ts"

const PAGE_SIZE = 5
const sorts = [
  ["-createdAt", "sortNewest"],
  ["createdAt", "sortOldest"],
  ["-rating", "sortHighest"],
  ["rating", "sortLowest"]
] as const

export interface ReviewsWidgetOptions {
  readonly client: StorefrontClient
  readonly messages: Messages
  readonly product: string
  readonly locale: string | undefined
  /** The product's rating, from the page's ratings request (undefined when the product was not found). */
  readonly rating: Promise<ProductRating | undefined>
  /** A fresh rating, after a review this shopper wrote was published. */
  readonly refreshRating: () => Promise<ProductRating | undefined>
}

/** Renders the widget; the promise settles once the summary and the first page of reviews are shown. */
export const reviewsWidget = (root: ShadowRoot, options: ReviewsWidgetOptions): Promise<void> => {
  const { client, messages, product } = options
  const formatter = new Intl.DateTimeFormat(options.locale, { dateStyle: "medium" })
  const date = (iso: string) => {
    const d = new Date(iso)
    return Number.isNaN(d.getTime()) ? "" : formatter.format(d)
  }
  let productId: string | undefined
  const productRef = (): ProductRef => productId === undefined ? { productSlug: product } : { productId }

  let sort: string = "-createdAt"
  let star: number | null = null
  let cursor: string | null = null
  // Answers to an older request (the shopper changed the sort meanwhile) are dropped.
  let generation = 0

  const summary = h("div", { class: "summary" }, h("p", { class: "meta" }, messages.loading))
  const list = h("ul", { class: "list reviews", "aria-busy": "true" })
  const filterNote = h("div", { class: "toolbar", hidden: true })
  const more = h("button", { type: "button", hidden: true }, messages.moreReviews)
  const formSlot = h("div", {})
  const status = h("p", { class: "status", role: "status", "aria-live": "polite" })
  const mine = h("div", {})
  const writeButton = h("button", { type: "button", class: "primary", "aria-expanded": "false" }, messages.writeReview)
  const sortId = "sort"
  const sortSelect = h(
    "select",
    { id: sortId },
    sorts.map(([value, key]) => h("option", { value }, messages[key]))
  )
  const histogramButtons: Array<HTMLButtonElement> = []

  const reviewItem = (r: StorefrontReview) =>
    h(
      "li",
      { class: "item" },
      h(
        "div",
        { class: "inline" },
        starsImage(r.rating, ratingLabel(messages, r.rating)),
        r.title === null ? null : h("strong", {}, r.title)
      ),
      h(
        "p",
        { class: "meta" },
        r.authorName,
        " · ",
        date(r.createdAt),
        r.verifiedBuyer ? [" ", h("span", { class: "badge" }, messages.verifiedBuyer)] : null
      ),
      r.body === null ? null : h("p", {}, r.body),
      r.response === null ? null : h(
        "div",
        { class: "reply" },
        h("p", { class: "meta" }, format(messages.responseFrom, { name: r.response.responderName })),
        h("p", {}, r.response.body)
      )
    )

  const load = (fresh: boolean) => {
    const mineGeneration = fresh ? ++generation : generation
    if (fresh) cursor = null
    list.setAttribute("aria-busy", "true")
    more.disabled = true
    return client.reviews(product, { limit: PAGE_SIZE, sort, rating: star, cursor }).then((page) => {
      if (mineGeneration !== generation) return
      if (fresh) replace(list)
      if (fresh && page.data.length === 0) append(list, h("li", { class: "meta" }, messages.noReviews))
      append(list, page.data.map(reviewItem))
      cursor = page.nextCursor
      more.hidden = cursor === null
      more.disabled = false
      list.setAttribute("aria-busy", "false")
    }, () => {
      if (mineGeneration !== generation) return
      replace(list, h("li", { class: "meta" }, messages.loadError))
      list.setAttribute("aria-busy", "false")
    })
  }

  const filterTo = (n: number | null) => {
    star = star === n ? null : n
    for (const [i, button] of histogramButtons.entries()) button.setAttribute("aria-pressed", String(5 - i === star))
    filterNote.hidden = star === null
    if (star !== null) {
      replace(
        filterNote,
        h("span", {}, format(messages.filteringBy, { star })),
        h("button", { type: "button", onclick: () => filterTo(null) }, messages.showAll)
      )
    }
    void load(true)
  }

  const renderSummary = (rating: ProductRating | undefined) => {
    productId = rating?.productId ?? productId
    histogramButtons.length = 0
    if (rating === undefined || rating.averageRating === null) {
      replace(summary, h("p", {}, messages.noReviews))
      return
    }
    const total = rating.reviewCount
    const rows = [5, 4, 3, 2, 1].map((n) => {
      const count = rating.histogram[String(n) as "1"]
      const fill = h("span", {})
      fill.style.width = `${total === 0 ? 0 : (count / total) * 100}%`
      const button = h(
        "button",
        { type: "button", "aria-pressed": String(star === n), onclick: () => filterTo(n) },
        h("span", { "aria-hidden": "true" }, `${n} ★`),
        h("span", { class: "bar", "aria-hidden": "true" }, fill),
        h("span", { "aria-hidden": "true" }, count),
        h("span", { class: "sr" }, format(messages.histogramRow, { star: n, count }))
      )
      histogramButtons.push(button)
      return h("li", {}, button)
    })
    replace(
      summary,
      h(
        "div",
        {},
        h("p", { class: "avg" }, roundedRating(rating.averageRating)),
        starsImage(rating.averageRating, ratingLabel(messages, rating.averageRating)),
        h(
          "p",
          { class: "meta" },
          total === 1 ? messages.reviewCountOne : format(messages.reviewCountOther, { count: total })
        )
      ),
      h("ul", { class: "hist" }, rows)
    )
  }

  const loadMine = () => {
    if (client.customer === undefined) return
    client.get<{ readonly data: ReadonlyArray<CustomerReview> }>("/storefront/customer/reviews", {}, true).then(
      (answer) => {
        const own = answer.data.filter((r) => productId === undefined || r.productId === productId)
        replace(
          mine,
          own.length === 0 ? null : h(
            "section",
            { "aria-label": messages.yourReviews },
            h("h3", {}, messages.yourReviews),
            h(
              "ul",
              { class: "list" },
              own.map((r) =>
                h(
                  "li",
                  { class: "item" },
                  starsImage(r.rating, ratingLabel(messages, r.rating)),
                  " ",
                  h("span", { class: "badge" }, r.published ? messages.published : messages.pending),
                  r.title === null ? null : h("p", {}, h("strong", {}, r.title))
                )
              )
            )
          )
        )
      },
      () => replace(mine)
    )
  }

  const closeForm = () => {
    replace(formSlot)
    writeButton.setAttribute("aria-expanded", "false")
    writeButton.focus()
  }
  writeButton.addEventListener("click", () => {
    if (formSlot.firstChild !== null) return closeForm()
    status.textContent = ""
    writeButton.setAttribute("aria-expanded", "true")
    const form = reviewForm(client, messages, productRef, (published, message) => {
      closeForm()
      status.textContent = message
      loadMine()
      if (published) {
        void options.refreshRating().then(renderSummary)
        void load(true)
      }
    }, closeForm)
    replace(formSlot, form)
    form.querySelector("input")?.focus()
  })
  sortSelect.addEventListener("change", () => {
    sort = sortSelect.value
    void load(true)
  })
  more.addEventListener("click", () => void load(false))

  // The first page of reviews is asked for before anything else is built: it is what the shopper waits for.
  const firstPage = load(true)
  append(
    root,
    h(
      "section",
      { "aria-label": messages.reviewsHeading },
      h("h2", {}, messages.reviewsHeading),
      summary,
      h("div", { class: "toolbar" }, writeButton),
      formSlot,
      status,
      mine,
      h(
        "div",
        { class: "toolbar" },
        h("label", { for: sortId }, messages.sortLabel),
        sortSelect
      ),
      filterNote,
      list,
      more
    ),
    questionsSection(client, messages, product, productRef, date)
  )
  const summarized = options.rating.then((rating) => {
    renderSummary(rating)
    loadMine()
  })
  return Promise.all([summarized, firstPage]).then(() => undefined)
}
