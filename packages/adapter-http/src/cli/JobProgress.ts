/**
 * What `import-jobs watch` prints: one line of progress per poll (a bar, the rows done of the total, skipped rows,
 * the status). A pure function of the job, so the rendering is tested without a terminal; a bar is a dozen
 * characters, not worth a dependency.
 */

export interface WatchedJob {
  readonly status: string
  readonly progress: {
    readonly totalRows: number
    readonly processedRows: number
    readonly skippedRows: number
    readonly importedRows: number
  }
}

const count = (n: number) => n.toLocaleString("en-US")

export const progressLine = (job: WatchedJob, width = 30): string => {
  const { processedRows, skippedRows, totalRows } = job.progress
  const ratio = job.status === "succeeded" ? 1 : totalRows === 0 ? 0 : Math.min(1, processedRows / totalRows)
  const filled = Math.round(ratio * width)
  const bar = "#".repeat(filled) + "-".repeat(width - filled)
  const rows = totalRows > 0 ? `${count(processedRows)}/${count(totalRows)} rows` : `${count(processedRows)} rows`
  return `[${bar}] ${String(Math.floor(ratio * 100)).padStart(3)}% ${rows} · ${
    count(skippedRows)
  } skipped · ${job.status}`
}

export const isFinished = (job: WatchedJob): boolean => job.status === "succeeded" || job.status === "failed"
