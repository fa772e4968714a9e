import { expect, it } from "vitest"
import { openDashboard } from "./dashboard.ts"

it("a dashboard user calls the use-cases directly, unmetered, with the API's rules", async () => {
  const dashboard = await openDashboard()
  try {
    const { worst, reply } = await dashboard.answerWorstReview()
    expect(worst.rating).toBe(2)
    expect(reply.published).toBe(true)
    // Not rate limited: more calls in a moment than the organization's 600 requests a minute would admit over HTTP.
    for (let i = 0; i < 700; i++) expect((await dashboard.listReviews()).data).toHaveLength(3)
  } finally {
    await dashboard.close()
  }
})
