/**
 * The storefront widget (shared DECISIONS §19, docs/DECISIONS.md §60, docs/WIDGET.md): one script, served at `GET /storefront/embed.js`,
 * that fills every `[data-feedback-widget]` element of the page, each in its own shadow root.
 *
 *   <div data-feedback-widget="stars" data-product="mug"></div>
 *   <div data-feedback-widget="reviews" data-product="mug"></div>
 *   <script src="https://api.example.com/storefront/embed.js" data-key="pk_…" async></script>
 *
 * Every stars and reviews element mounted together shares ONE ratings request. Only the API the script came from
 * (or `data-api`) is called; nothing is loaded from anywhere else, and nothing is evaluated.
 */
import { h } from "./Dom.ts"
import { type Messages, withOverrides } from "./Messages.ts"
import { reviewsWidget } from "./ReviewsWidget.ts"
import { starsImage } from "./Stars.ts"
import { format } from "./Messages.ts"
import { type ProductRating, type SignedCustomer, StorefrontClient } from "./StorefrontClient.ts"
import { css } from "./Styles.ts"
import { surveyForm } from "./SurveyForm.ts"

interface PageConfig {
  readonly messages?: Partial<Messages>
  readonly locale?: string
}
interface WidgetGlobal {
  /** Fills elements added since the last call (pages that render late, single-page shops). */
  readonly mount: () => Promise<void>
}
declare global {
  interface Window {
    feedbackWidget?: PageConfig
    FeedbackWidget?: WidgetGlobal
  }
}

const EMBED_PATH = "/storefront/embed.js"
/** The ratings endpoint takes at most this many products at once. */
const RATINGS_BATCH = 100

performance.mark("feedback-widget:start")

const script = (document.currentScript as HTMLScriptElement | null) ??
  document.querySelector<HTMLScriptElement>(`script[src*="${EMBED_PATH}"]`)

/** `data-api`, else where the script came from: its URL less `/storefront/embed.js` (keeps a path prefix). */
const apiBase = (): string => {
  const explicit = script?.dataset["api"]
  if (explicit !== undefined && explicit !== "") return explicit.replace(/\/+$/, "")
  const src = new URL(script?.src ?? location.href, location.href)
  return src.pathname.endsWith(EMBED_PATH)
    ? `${src.origin}${src.pathname.slice(0, -EMBED_PATH.length)}`
    : src.origin
}

const signedCustomer = (element: HTMLElement): SignedCustomer | undefined => {
  const from = (name: string) => element.dataset[name] ?? script?.dataset[name]
  const customerEmail = from("customerEmail")
  const timestamp = from("timestamp")
  const signature = from("signature")
  return customerEmail && timestamp && signature ? { customerEmail, timestamp, signature } : undefined
}

let sheet: CSSStyleSheet | undefined
/** A shadow root with the widget's styles: one constructed sheet shared by every root (allowed by a strict CSP). */
const shadowOf = (host: HTMLElement): ShadowRoot => {
  const root = host.shadowRoot ?? host.attachShadow({ mode: "open" })
  root.replaceChildren()
  if ("adoptedStyleSheets" in root && typeof CSSStyleSheet === "function" && "replaceSync" in CSSStyleSheet.prototype) {
    sheet ??= new CSSStyleSheet()
    if (sheet.cssRules.length === 0) sheet.replaceSync(css)
    root.adoptedStyleSheets = [sheet]
  } else {
    root.append(h("style", {}, css))
  }
  return root
}

const mounted = new WeakSet<Element>()
const base = apiBase()
const key = script?.dataset["key"]

const mount = async (): Promise<void> => {
  const config = window.feedbackWidget ?? {}
  const messages = withOverrides(config.messages)
  const hosts = Array.from(document.querySelectorAll<HTMLElement>("[data-feedback-widget]"))
    .filter((host) => !mounted.has(host))
  hosts.forEach((host) => mounted.add(host))
  const productOf = (host: HTMLElement) => (host.dataset["product"] ?? "").trim()
  const rated = hosts.filter((host) => ["stars", "reviews"].includes(host.dataset["feedbackWidget"] ?? ""))
  const wanted = [...new Set(rated.map(productOf).filter((p) => p !== ""))]
  const client = new StorefrontClient(base, key, undefined)

  // One request for every product on the page (one per hundred, the endpoint's bound).
  const ratingsOf = (products: ReadonlyArray<string>): Promise<Map<string, ProductRating>> => {
    const batches: Array<ReadonlyArray<string>> = []
    for (let i = 0; i < products.length; i += RATINGS_BATCH) batches.push(products.slice(i, i + RATINGS_BATCH))
    return Promise.all(batches.map((batch) => client.ratings(batch).then((r) => r.data, () => []))).then((all) => {
      const byProduct = new Map<string, ProductRating>()
      for (const rating of all.flat()) {
        byProduct.set(rating.slug, rating)
        byProduct.set(rating.productId.toLowerCase(), rating)
      }
      return byProduct
    })
  }
  const find = (ratings: Map<string, ProductRating>, product: string) =>
    ratings.get(product) ?? ratings.get(product.toLowerCase())
  const ratings = wanted.length === 0 ? Promise.resolve(new Map<string, ProductRating>()) : ratingsOf(wanted)

  const done: Array<Promise<unknown>> = [ratings]
  for (const host of hosts) {
    const kind = host.dataset["feedbackWidget"]
    const product = productOf(host)
    if (kind === "stars" && product !== "") {
      const root = shadowOf(host)
      done.push(ratings.then((all) => {
        const rating = find(all, product)
        if (rating === undefined) return
        const label = rating.averageRating === null
          ? messages.noRating
          : format(messages.starsWithCount, {
            rating: (Math.round(rating.averageRating * 10) / 10).toFixed(1),
            count: rating.reviewCount
          })
        root.append(
          h(
            "span",
            { class: "inline" },
            starsImage(rating.averageRating ?? 0, label),
            h("span", { "aria-hidden": "true" }, `(${rating.reviewCount})`)
          )
        )
      }))
    } else if (kind === "reviews" && product !== "") {
      const signed = new StorefrontClient(base, key, signedCustomer(host))
      done.push(reviewsWidget(shadowOf(host), {
        client: signed,
        messages,
        product,
        locale: config.locale,
        rating: ratings.then((all) => find(all, product)),
        refreshRating: () => ratingsOf([product]).then((all) => find(all, product))
      }))
    } else if (kind === "survey" && host.dataset["token"]) {
      surveyForm(shadowOf(host), client, messages, host.dataset["token"])
    }
  }
  // Every stars element filled, every reviews widget's summary and first page shown: what the budget measures.
  await Promise.all(done)
  performance.mark("feedback-widget:rendered")
}

window.FeedbackWidget = { mount }
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => void mount())
else void mount()
