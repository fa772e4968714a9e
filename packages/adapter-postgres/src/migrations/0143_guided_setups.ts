import type { Migration } from "../kernel/Migrations.ts"

/**
 * The flow each organization's guided reviews setup created (docs/SETUP.md): the setup locks its organization's row
 * for its unit of work, so concurrent calls run one after the other, and a call while that flow exists and is
 * active is a 409. No foreign key to the flow: a deleted flow leaves its id here, and the setup may run again.
 */
export const guidedSetupsMigration: Migration = {
  id: 143,
  name: "guided_setups",
  statements: [
    `CREATE TABLE guided_setups (
      organization_id uuid PRIMARY KEY REFERENCES organizations (organization_id) ON DELETE CASCADE,
      survey_flow_id uuid
    )`
  ]
}
