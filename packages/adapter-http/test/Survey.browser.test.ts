/**
 * A review request end to end (shared DECISIONS §17, §19): the guided setup's flow sends its email through nodemailer
 * to a real SMTP server (`smtp-server`) on loopback; the survey link in the email that server received is opened in
 * headless Chromium; the shopper rates the order's products on `/r/{token}` (no storefront page involved); the
 * reviews are in the admin API with `verifiedBuyer` and the survey's id, and the survey is completed. The page is
 * checked with axe-core, and it requests nothing from another origin.
 */
import { Redacted } from "effect"
import type { Browser } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_PRODUCT_SLUG } from "../src/server/organizations/DemoCatalog.ts"
import { browserTitle, chromiumPresent, launchChromium, screenshot, seriousViolations } from "./Chromium.ts"
import { type DemoServer, startDemoServer } from "./DemoServer.ts"
import { type SmtpReceiver, startSmtpReceiver } from "./SmtpReceiver.ts"
import { eventually } from "./WebhookReceiver.ts"

/** The message's text with quoted-printable soft breaks and escapes undone (enough to read a URL out of it). */
const readable = (raw: string) =>
  raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)))

describe.skipIf(!chromiumPresent)(
  browserTitle("a survey from its email to the admin API, in headless Chromium"),
  () => {
    let smtp: SmtpReceiver
    let server: DemoServer
    let browser: Browser
    beforeAll(async () => {
      smtp = await startSmtpReceiver()
      server = await startDemoServer({
        email: { smtp: { url: Redacted.make(smtp.url), from: "Demo shop <shop@demo.example>" } }
      })
      browser = await launchChromium()
    }, 120_000)
    afterAll(async () => {
      await browser?.close()
      await server?.close()
      await smtp?.close()
    })

    it(
      "the emailed link opens the form; the ratings become verified reviews of the survey",
      { timeout: 180_000 },
      async () => {
        // The guided setup: a request right after fulfilment, no reminder; then an order of two products for Grace.
        const setup = await server.admin("POST", "/organization/setup/reviews", {
          data: { delayDays: 0, reminder: false }
        })
        expect(setup.status).toBe(201)
        const order = await server.admin("POST", "/orders", {
          customer: { email: "grace@demo.example" },
          lines: [{ productSlug: DEMO_PRODUCT_SLUG }, { productSlug: "pour-over-kettle" }],
          status: "fulfilled"
        })
        expect(order.status).toBe(201)

        const email = await eventually(
          async () => smtp.messages.find((m) => m.to.includes("grace@demo.example")),
          60_000,
          "the review request email"
        )
        const link = new RegExp(`${server.origin.replace(/[.:/]/g, "\\$&")}/r/[A-Za-z0-9_-]{22,64}`).exec(
          readable(email.raw)
        )?.[0]
        expect(link, `the survey link in the email:\n${readable(email.raw)}`).toBeDefined()

        const context = await browser.newContext({ viewport: { width: 900, height: 900 } })
        const elsewhere: Array<string> = []
        await context.route("**/*", (route) => {
          const url = route.request().url()
          if (url.startsWith(`${server.origin}/`) || url.startsWith("data:")) return route.fallback()
          elsewhere.push(url)
          return route.abort()
        })
        try {
          const page = await context.newPage()
          // The shopper takes a minute over the form (the page's clock starts a minute back): never `too_fast`.
          await page.clock.install({ time: Date.now() - 60_000 })
          expect((await page.goto(link!))?.status()).toBe(200)
          await page.getByRole("heading", { name: "How was your order, Grace?" }).waitFor()
          expect(await seriousViolations(page)).toEqual([])

          // Nothing rated yet: the form says so.
          await page.getByRole("button", { name: "Send my reviews" }).click()
          await page.getByText("Rate at least one product.").waitFor()

          // A click on the fifth and the fourth drawn star (the labels of the radio buttons).
          const mug = page.getByRole("group", { name: "Your rating of Everyday Ceramic Mug" })
          await mug.locator("label").nth(4).click()
          expect(await mug.getByRole("radio", { name: "5 stars" }).isChecked()).toBe(true)
          const kettle = page.getByRole("group", { name: "Your rating of Pour-Over Kettle" })
          await kettle.locator("label").nth(3).click()
          expect(await kettle.getByRole("radio", { name: "4 stars" }).isChecked()).toBe(true)
          await page.getByLabel("Title").first().fill("Exactly as pictured")
          expect(await page.getByLabel("Your name").inputValue()).toBe("Grace")
          await screenshot(page, "survey-page.png")
          await page.getByRole("button", { name: "Send my reviews" }).click()
          await page.getByText("Thank you for your reviews!").waitFor()
          expect(elsewhere).toEqual([])
        } finally {
          await context.close()
        }

        const surveys = await server.admin(
          "GET",
          `/surveys?filter=${encodeURIComponent(JSON.stringify({ "order.id": order.body.id }))}`
        )
        const [survey] = surveys.body.data
        expect(survey.status).toBe("completed")
        const reviews = await server.admin("GET", "/reviews?limit=100&include=customer")
        const fromSurvey = reviews.body.data.filter((r: any) => r.surveyId === survey.id)
        expect(fromSurvey.map((r: any) => [r.rating, r.verifiedBuyer, r.customer.email]).sort()).toEqual([
          [4, true, "grace@demo.example"],
          [5, true, "grace@demo.example"]
        ])
        expect(fromSurvey.find((r: any) => r.rating === 5).title).toBe("Exactly as pictured")

        // The same link again: every product reviewed, nothing more to send.
        const again = await browser.newPage()
        try {
          await again.goto(link!)
          await again.getByText("You have reviewed every product of this order. Thank you!").waitFor()
        } finally {
          await again.close()
        }
      }
    )
  }
)
