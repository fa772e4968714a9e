import type { Migration } from "../kernel/Migrations.ts"
import { claimQuery, plannerSettings } from "./0109_delivery_outcomes_as_arrays.ts"

/**
 * The claim records the outcomes it carries first, then claims (docs/DECISIONS.md §45): the deliveries that just
 * finished free their webhook's slots and their record's next delivery for this same claim, as the memory store
 * always did, where they used to hold them until the next turn. Replaced in place: a process of the previous version
 * calling it during a rolling restart only claims more, within the same limits.
 */
const claimFunction = `CREATE OR REPLACE FUNCTION feedback_claim_with_outcomes(
    orgs uuid[], ids uuid[], statuses text[], codes integer[], errors text[], durations integer[],
    dispatcher uuid, claimed_at timestamptz, max_claims integer, per_webhook integer)
  RETURNS TABLE (organization_id uuid, id uuid, webhook_id uuid, event_id uuid, event text, idempotency_key uuid,
    payload text, created_at timestamptz, redelivery_of uuid, record_key text, url text, hmac_secret text,
    previous_hmac_secret text, previous_secret_expires_at timestamptz)
  LANGUAGE plpgsql${plannerSettings}
  AS $fn$
  #variable_conflict use_column
  BEGIN
    -- Each statement of the function sees what the one before it wrote: the claim counts the recorded as finished.
    PERFORM 1 FROM feedback_record_outcomes(orgs, ids, statuses, codes, errors, durations, dispatcher);
    RETURN QUERY
${claimQuery};
  END
  $fn$`

export const claimAfterOutcomesMigration: Migration = {
  id: 110,
  name: "claim_after_outcomes",
  statements: [claimFunction]
}
