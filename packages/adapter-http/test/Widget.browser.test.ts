/**
 * The storefront widget and the hosted pages in headless Chromium (shared DECISIONS §19), over a real server on a
 * loopback port seeded as `npm start` seeds an empty store (`DemoServer.ts`): `/demo` with its stars filled by one
 * ratings request, the reviews a page at a time, sorted and filtered, the ask form reaching the merchant's queue, the
 * widget on a merchant's page on another origin (CORS) with hostile CSS, the unsubscribe page, and axe-core finding
 * no serious or critical violation on any of them. Every request that leaves the API's origin (or the merchant's
 * page, where there is one) is recorded and refused.
 */
import { Catalog, type Kernel } from "@feedback/core"
import type { Browser, BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_PRODUCT_SLUG, demoProducts } from "../src/server/organizations/DemoCatalog.ts"
import { browserTitle, chromiumPresent, launchChromium, screenshot, seriousViolations } from "./Chromium.ts"
import { type DemoServer, startDemoServer } from "./DemoServer.ts"

/** A context whose requests may only reach `allowed` origins; everything else is refused and listed. */
const isolatedContext = async (browser: Browser, allowed: ReadonlyArray<string>) => {
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } })
  const elsewhere: Array<string> = []
  await context.route("**/*", (route) => {
    const url = route.request().url()
    if (allowed.some((origin) => url.startsWith(`${origin}/`)) || url.startsWith("data:")) return route.fallback()
    elsewhere.push(url)
    return route.abort()
  })
  return { context, elsewhere }
}

const ratingsRequests = (page: Page) => {
  const seen: Array<string> = []
  page.on("request", (request) => {
    if (new URL(request.url()).pathname === "/storefront/ratings") seen.push(request.url())
  })
  return seen
}

/** The labels of the review list's star images, in order. */
const listedRatings = (page: Page) =>
  page.locator("[data-feedback-widget=reviews] ul.reviews li.item .stars").evaluateAll((els) =>
    els.map((el) => Number(/Rated ([\d.]+)/.exec(el.getAttribute("aria-label") ?? "")?.[1]))
  )

describe.skipIf(!chromiumPresent)(browserTitle("the widget and the hosted pages in headless Chromium"), () => {
  let server: DemoServer
  let browser: Browser
  beforeAll(async () => {
    server = await startDemoServer()
    browser = await launchChromium()
  }, 120_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("/demo: every stars element and the summary from ONE ratings request, reviews by page, sort and star filter", {
    timeout: 120_000
  }, async () => {
    const { context, elsewhere } = await isolatedContext(browser, [server.origin])
    try {
      const page = await context.newPage()
      const ratings = ratingsRequests(page)
      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      const response = await page.goto(`${server.origin}/demo`)
      expect(response?.status()).toBe(200)

      // Four stars elements and the reviews summary, all filled.
      const stars = page.locator("[data-feedback-widget=stars] .stars")
      await expect.poll(() => stars.count()).toBe(demoProducts.length)
      const labels = await stars.evaluateAll((els) => els.map((el) => el.getAttribute("aria-label")))
      expect(labels[0]).toBe("Rated 4.0 out of 5, 7 reviews")
      expect(labels.every((label) => /^Rated \d\.\d out of 5, \d+ reviews?$/.test(label ?? ""))).toBe(true)
      await page.getByText("Based on 7 reviews").waitFor()
      expect(ratings).toHaveLength(1)
      const asked = new URL(ratings[0]!).searchParams.get("products")!.split(",")
      expect(asked.sort()).toEqual(demoProducts.map((p) => p.slug).sort())

      // Newest first, five at a time; the reply and the verified badge are shown.
      await expect.poll(() => listedRatings(page)).toEqual([5, 4, 5, 3, 5])
      await page.getByText("Response from Demo shop").first().waitFor()
      await page.getByText("Is the mug microwave safe?").waitFor()
      await screenshot(page, "widget-demo.png")
      expect(await page.getByText("Verified buyer").count()).toBeGreaterThan(0)
      await page.getByRole("button", { name: "Show more reviews" }).click()
      await expect.poll(() => listedRatings(page)).toEqual([5, 4, 5, 3, 5, 4, 2])
      await expect.poll(() => page.getByRole("button", { name: "Show more reviews" }).isVisible()).toBe(false)

      // Sorted by the lowest rating, then only the five-star reviews (the histogram's row), then all again.
      await page.getByLabel("Sort reviews").selectOption("rating")
      await expect.poll(() => listedRatings(page)).toEqual([2, 3, 4, 4, 5])
      await page.getByRole("button", { name: "5 stars: 3 reviews" }).click()
      await expect.poll(() => listedRatings(page)).toEqual([5, 5, 5])
      expect(await page.getByRole("button", { name: "5 stars: 3 reviews" }).getAttribute("aria-pressed")).toBe("true")
      await page.getByRole("button", { name: "Show all reviews" }).click()
      await expect.poll(() => listedRatings(page)).toEqual([2, 3, 4, 4, 5])

      // Questions with their answers.
      await page.getByText("Is the mug microwave safe?").waitFor()
      await page.getByText("It is 9.5 cm tall").waitFor()

      expect(ratings, "one ratings request for the whole page").toHaveLength(1)
      expect(errors).toEqual([])
      expect(elsewhere, "requests that left the API's origin").toEqual([])
    } finally {
      await context.close()
    }
  })

  it("the ask form: keyboard only, labelled errors, and the question arrives in the merchant's queue", {
    timeout: 120_000
  }, async () => {
    const { context, elsewhere } = await isolatedContext(browser, [server.origin])
    try {
      const page = await context.newPage()
      await page.goto(`${server.origin}/demo`)
      const ask = page.getByRole("button", { name: "Ask a question" })
      await ask.focus()
      await page.keyboard.press("Enter")
      expect(await ask.getAttribute("aria-expanded")).toBe("true")
      // Submitted empty: the required field says so, is marked invalid, and has the focus.
      await page.getByRole("button", { name: "Submit question" }).click()
      const question = page.getByLabel("Your question")
      await expect.poll(() => question.getAttribute("aria-invalid")).toBe("true")
      await page.getByText("Fill in this field.").waitFor()
      expect(await question.evaluate((el) => el === (el.getRootNode() as any).activeElement)).toBe(true)

      await page.keyboard.type("Does it keep tea hot for long?")
      await page.keyboard.press("Tab")
      await page.keyboard.type("Rosa")
      await page.getByLabel("Your email, to hear when it is answered (optional)").fill("rosa@example.com")
      await page.getByRole("button", { name: "Submit question" }).click()
      await page.getByText("Thank you! Your question will appear once it is answered.").waitFor()

      const queue = await server.admin("GET", "/product-questions?limit=50")
      expect(queue.status).toBe(200)
      const asked = queue.body.data.find((q: any) => q.body === "Does it keep tea hot for long?")
      expect(asked).toMatchObject({ published: false, askerName: "Rosa", source: "widget" })
      expect(elsewhere).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("axe-core: no serious or critical violation on /demo, with the review and ask forms open", {
    timeout: 120_000
  }, async () => {
    const { context } = await isolatedContext(browser, [server.origin])
    try {
      const page = await context.newPage()
      await page.goto(`${server.origin}/demo`)
      await page.getByText("Based on 7 reviews").waitFor()
      await page.getByText("Is the mug microwave safe?").waitFor()
      expect(await seriousViolations(page)).toEqual([])
      await page.getByRole("button", { name: "Write a review" }).click()
      await page.getByRole("button", { name: "Ask a question" }).click()
      await page.getByRole("button", { name: "Submit review" }).click()
      await page.getByText("Choose a rating from 1 to 5 stars.").waitFor()
      expect(await seriousViolations(page)).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("on a merchant's page on another origin with hostile CSS: rendered intact through CORS, the page untouched", {
    timeout: 120_000
  }, async () => {
    // The merchant's page and the API, each on its own https origin (the site's domain is shop.test), both served
    // by routing: the page from this test, the API by proxying to the loopback server.
    const shop = "https://shop.test"
    const api = "https://api.shop.test"
    const { context, elsewhere } = await isolatedContext(browser, [shop, api])
    const publishable = (await server.admin("GET", "/publishable-keys")).body.data[0].key as string
    const hostile = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Hostile shop</title><style>
      * { font-size: 3px !important; color: #ff00ff !important; letter-spacing: 9px !important; box-sizing: content-box !important }
      div { display: flex !important; flex-direction: row-reverse !important; position: relative; }
      button, svg, ul, li, p, span { display: none !important; }
      [role=img] { visibility: hidden !important; }
      :root { --unrelated: 1; font-family: "Comic Sans MS", cursive !important; }
      </style></head><body><main><h1>Mug</h1><p id="own">The shop's own text</p>
      <div data-feedback-widget="stars" data-product="${DEMO_PRODUCT_SLUG}"></div>
      <div data-feedback-widget="reviews" data-product="${DEMO_PRODUCT_SLUG}"></div></main>
      <script src="${api}/storefront/embed.js" data-key="${publishable}" async></script></body></html>`
    await context.route(`${shop}/**`, (route) => route.fulfill({ contentType: "text/html", body: hostile }))
    await context.route(`${api}/**`, async (route) => {
      const url = new URL(route.request().url())
      const response = await route.fetch({ url: `${server.origin}${url.pathname}${url.search}` })
      return route.fulfill({ response })
    })
    try {
      const page = await context.newPage()
      const ratings = ratingsRequests(page)
      await page.goto(`${shop}/product`)
      const summary = page.getByText("Based on 7 reviews")
      await summary.waitFor()
      // The widget's own styles hold inside its shadow root: visible buttons and stars at its own sizes.
      const write = page.getByRole("button", { name: "Write a review" })
      expect(await write.isVisible()).toBe(true)
      const look = await write.evaluate((el) => {
        const style = (globalThis as any).getComputedStyle(el)
        return { fontSize: style.fontSize, color: style.color, letterSpacing: style.letterSpacing }
      })
      expect(look).toEqual({ fontSize: "15px", color: "rgb(255, 255, 255)", letterSpacing: "normal" })
      const star = page.locator("[data-feedback-widget=stars] .stars").first()
      expect(await star.isVisible()).toBe(true)
      const size = await star.evaluate((el) => el.getBoundingClientRect().width)
      expect(size).toBeGreaterThan(50)
      expect(await page.locator("[data-feedback-widget=reviews] ul.reviews li.item").count()).toBe(5)
      // The page's own rules still apply to the page: the widget changed nothing outside its roots.
      const own = await page.locator("#own").evaluate((el) => (globalThis as any).getComputedStyle(el).display)
      expect(own).toBe("none")
      expect(ratings).toHaveLength(1)
      expect(elsewhere).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("/u/{token}: the unsubscribe page, accessible, opts the customer out", { timeout: 120_000 }, async () => {
    const customers = await server.admin("GET", "/customers?limit=1")
    const customer = customers.body.data[0] as { id: Kernel.CustomerId; email: string }
    const token = await server.run(Catalog.Unsubscribes.use((u) => u.tokenFor(server.organizationId, customer.id)))
    const { context, elsewhere } = await isolatedContext(browser, [server.origin])
    try {
      const page = await context.newPage()
      expect((await page.goto(`${server.origin}/u/${token}`))?.status()).toBe(200)
      expect(await seriousViolations(page)).toEqual([])
      await page.getByRole("button", { name: "Unsubscribe" }).click()
      await page.getByRole("heading", { name: "You are unsubscribed" }).waitFor()
      expect(await seriousViolations(page)).toEqual([])
      const after = await server.admin("GET", `/customers/${customer.id}`)
      expect(after.body).toMatchObject({ emailOptOut: true, emailOptOutSource: "unsubscribe_link" })
      expect(elsewhere).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("/r/{token}: a malformed or unknown link is the same accessible 404 page", { timeout: 120_000 }, async () => {
    const { context, elsewhere } = await isolatedContext(browser, [server.origin])
    try {
      const page = await context.newPage()
      expect((await page.goto(`${server.origin}/r/short`))?.status()).toBe(404)
      await page.getByRole("heading", { name: "This link is not valid" }).waitFor()
      expect((await page.goto(`${server.origin}/r/${"x".repeat(43)}`))?.status()).toBe(404)
      await page.getByRole("heading", { name: "This link is not valid" }).waitFor()
      expect(await seriousViolations(page)).toEqual([])
      expect(elsewhere).toEqual([])
    } finally {
      await context.close()
    }
  })

  // The submissions below come from 127.0.0.1 like the browser's: at most three, under the ip_collision threshold.
  // Each page's clock starts a minute back, as if the shopper took a minute over the form (never `too_fast`).
  const shopperPage = async (context: BrowserContext, path: string) => {
    const page = await context.newPage()
    await page.clock.install({ time: Date.now() - 60_000 })
    await page.goto(`${server.origin}${path}`)
    await page.getByText("Based on").first().waitFor()
    return page
  }
  /** Fills the review form; the stars by keyboard (the first radio, then arrow keys). */
  const writeReview = async (page: Page, stars: number, fields: Record<string, string>) => {
    await page.getByRole("button", { name: "Write a review" }).click()
    await page.getByRole("radio", { name: "1 star" }).focus()
    await page.keyboard.press("Space")
    for (let i = 1; i < stars; i++) await page.keyboard.press("ArrowRight")
    expect(await page.getByRole("radio", { name: stars === 1 ? "1 star" : `${stars} stars` }).isChecked()).toBe(true)
    for (const [label, value] of Object.entries(fields)) await page.getByLabel(label, { exact: true }).fill(value)
    await page.getByRole("button", { name: "Submit review" }).click()
  }
  const reviewTitled = async (title: string) => {
    const list = await server.admin("GET", "/reviews?limit=100&include=customer")
    return list.body.data.find((r: any) => r.title === title)
  }

  it("a review from the widget arrives in the admin API's moderation queue with its provenance", {
    timeout: 120_000
  }, async () => {
    const { context, elsewhere } = await isolatedContext(browser, [server.origin])
    try {
      const page = await shopperPage(context, "/demo")
      await writeReview(page, 4, {
        Title: "Lovely weight",
        "Your review": "Sits well in the hand.",
        "Your name": "Rosa Parks",
        "Your email": "rosa@example.com"
      })
      await page.getByText("Thank you! Your review will appear once it has been checked.").waitFor()
      const review = await reviewTitled("Lovely weight")
      expect(review).toMatchObject({
        rating: 4,
        body: "Sits well in the hand.",
        published: false,
        moderatedAt: null,
        flagged: false,
        verifiedBuyer: false,
        surveyId: null,
        ipAddress: "127.0.0.1",
        customer: { email: "rosa@example.com", firstName: "Rosa", lastName: "Parks" }
      })
      expect(review.userAgent).toMatch(/Chrome/)
      expect(review.submitSeconds).toBeGreaterThanOrEqual(5)
      // Not on the storefront yet.
      expect(await page.getByText("Lovely weight").count()).toBe(0)
      expect(elsewhere).toEqual([])
    } finally {
      await context.close()
    }
  })

  it("with auto-publish on, a review shows on the page at once, in the list and the summary", {
    timeout: 120_000
  }, async () => {
    const settings = await server.admin("PATCH", "/review-settings", { autoPublish: true, autoPublishMinRating: 4 })
    expect(settings.status).toBe(200)
    const { context, elsewhere } = await isolatedContext(browser, [server.origin])
    try {
      const page = await shopperPage(context, "/demo")
      await writeReview(page, 5, {
        Title: "Instantly my favourite",
        "Your name": "Mary Jackson",
        "Your email": "mary@example.com"
      })
      await page.getByText("Thank you! Your review is published.").waitFor()
      await page.getByText("Instantly my favourite").waitFor()
      await page.getByText("Based on 8 reviews").waitFor()
      expect(await reviewTitled("Instantly my favourite")).toMatchObject({ published: true, rating: 5 })
      expect(elsewhere).toEqual([])
    } finally {
      await context.close()
      await server.admin("PATCH", "/review-settings", { autoPublish: false })
    }
  })

  it("a signed customer: no email asked, a verified buyer's review, listed under their own reviews", {
    timeout: 120_000
  }, async () => {
    // Ada bought the mug; the demo page plays the merchant's backend and signs her in (?customer=).
    const order = await server.admin("POST", "/orders", {
      customer: { email: "ada@demo.example" },
      lines: [{ productSlug: DEMO_PRODUCT_SLUG }],
      status: "fulfilled"
    })
    expect(order.status).toBe(201)
    const { context, elsewhere } = await isolatedContext(browser, [server.origin])
    try {
      const page = await shopperPage(context, "/demo?customer=ada@demo.example")
      await page.getByRole("button", { name: "Write a review" }).click()
      await page.getByText("Reviewing as ada@demo.example").waitFor()
      expect(await page.getByLabel("Your email", { exact: true }).count()).toBe(0)
      await page.getByRole("button", { name: "Cancel" }).click()
      await writeReview(page, 5, { Title: "Second one, still great", "Your name": "Ada L" })
      await page.getByText("Thank you! Your review will appear once it has been checked.").waitFor()
      const review = await reviewTitled("Second one, still great")
      expect(review).toMatchObject({ verifiedBuyer: true, published: false, customer: { email: "ada@demo.example" } })
      // Her own reviews, pending ones included, from the signed GET /storefront/customer/reviews.
      await page.getByRole("heading", { name: "Your reviews" }).waitFor()
      await page.getByText("Awaiting moderation").waitFor()
      expect(elsewhere).toEqual([])
    } finally {
      await context.close()
    }
  })
})
