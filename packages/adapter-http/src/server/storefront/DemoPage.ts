/**
 * `GET /demo` (shared DECISIONS §19; docs/DECISIONS.md §60): a product page of the demo organization's catalog with the widget on it, as a
 * merchant would paste it: stars beside the title and under related products (all filled by one ratings request),
 * the reviews widget below, the script tag with the organization's newest publishable key. Served only where the
 * demo organization exists (the standalone server seeds it, `DemoSeed.ts`); elsewhere the same 404 page as any link.
 *
 * `?customer=<email of a demo customer>` plays the merchant's backend: the page carries that shopper's signed values
 * (docs/STOREFRONT.md "Signed customer calls"), so the signed flow can be tried. Only the demo's own customers.
 */
import { Organizations, Storefront } from "@feedback/core"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import { escapeHtml, htmlPage, layout } from "../HostedPage.ts"
import { DEMO_PRODUCT_SLUG, demoCustomerEmails, demoProducts } from "../organizations/DemoCatalog.ts"
import type { DemoSlot } from "../organizations/DemoSeed.ts"

export const DEMO_PAGE_ROUTES = [["GET", "/demo"]] as const

const demoHeaders = {
  "cache-control": "no-cache",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; connect-src 'self'; img-src data:; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
}

const pageStyle = `
.shop{display:flex;justify-content:space-between;align-items:center;border-bottom:1px solid #d3d8de;margin:-1rem 0 2rem;padding-bottom:1rem}
.shop strong{font-size:1.1rem}
.product{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:2rem;margin-bottom:2.5rem}
.photo{aspect-ratio:1;border-radius:8px;background:linear-gradient(135deg,#e9d8c4,#c9a27e)}
.price{font-size:1.4rem;font-weight:700}
.related{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:1rem;margin:2.5rem 0 0;padding:0;list-style:none}
.related li{padding:1rem;border:1px solid #d3d8de;border-radius:8px}
h2{font-size:1.2rem}
@media (max-width:40rem){.product,.related{grid-template-columns:1fr}}
`

export const demoPage = (key: string, signed: string) => {
  const [shown, ...others] = demoProducts
  return layout(
    `${shown.title} · Demo shop`,
    `<header class="shop"><strong>Demo shop</strong><span>Kitchen &amp; table</span></header>
<div class="product">
<div class="photo" role="img" aria-label="${escapeHtml(shown.title)}"></div>
<div>
<h1>${escapeHtml(shown.title)}</h1>
<div data-feedback-widget="stars" data-product="${DEMO_PRODUCT_SLUG}"></div>
<p class="price">€24.00</p>
<p>${escapeHtml(shown.description)}</p>
<button type="button">Add to cart</button>
</div>
</div>
<div data-feedback-widget="reviews" data-product="${DEMO_PRODUCT_SLUG}"${signed}></div>
<h2>You may also like</h2>
<ul class="related">
${
      others.map((p) =>
        `<li><strong>${escapeHtml(p.title)}</strong>
<div data-feedback-widget="stars" data-product="${escapeHtml(p.slug)}"></div></li>`
      ).join("\n")
    }
</ul>`,
    {
      wide: true,
      head: pageStyle,
      // Relative: the page works wherever the API is mounted.
      after: `<script src="storefront/embed.js" data-key="${escapeHtml(key)}" async></script>`
    }
  )
}

export const demoMissingPage = layout(
  "No demo here",
  `<h1>No demo on this server</h1>
<p>The demo storefront exists on a server that created the demo organization at its first start (an empty store).</p>`
)

export const DemoPageRoute = (slot: DemoSlot) =>
  Layer.unwrap(Effect.gen(function*() {
    const keys = yield* Organizations.StorefrontRecordRepository
    const serve = Effect.gen(function*() {
      const organizationId = slot.current
      const newest = organizationId === undefined ? Option.none() : yield* keys.newestPublishableKey(organizationId)
      if (Option.isNone(newest)) return htmlPage(demoMissingPage, 404, demoHeaders)
      const key = newest.value.key
      const request = yield* HttpServerRequest.HttpServerRequest
      const customer = new URL(request.url, "http://demo.invalid").searchParams.get("customer")?.toLowerCase()
      let signed = ""
      if (customer !== undefined && demoCustomerEmails.includes(customer)) {
        const record = yield* keys.findPublishableKey(key)
        const secret = Option.isSome(record) ? record.value.signingSecret : null
        if (secret !== null) {
          const timestamp = String(Math.floor(Date.now() / 1000))
          signed = ` data-customer-email="${escapeHtml(customer)}" data-timestamp="${timestamp}" data-signature="${
            Storefront.signCustomer(secret, key, customer, timestamp)
          }"`
        }
      }
      return htmlPage(demoPage(key, signed), 200, demoHeaders)
    })
    return HttpRouter.add("GET", "/demo", serve)
  }))
