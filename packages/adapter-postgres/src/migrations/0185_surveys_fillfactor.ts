import type { Migration } from "../kernel/Migrations.ts"

/**
 * A sent survey step updates its row three times (claimed, marked sending, its outcome; docs/DECISIONS.md §80). Rows
 * are written with room left on their page, so an update that moves no indexed column (the mark) stays on the page
 * without new index entries (a HOT update), and the others find room on the same page. Rows stored before keep
 * their pages until rewritten.
 */
export const surveysFillfactorMigration: Migration = {
  id: 185,
  name: "surveys_fillfactor",
  statements: [`ALTER TABLE surveys SET (fillfactor = 70)`]
}
