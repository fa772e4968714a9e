/** Every migration of the PostgreSQL store, in one list: adding a capability adds its file here. */
import type { Migration } from "../kernel/Migrations.ts"
import { organizationsMigration } from "./0001_organizations.ts"
import { rateLimitMigration } from "./0002_rate_limits.ts"
import { catalogAndReviewsMigration } from "./0003_catalog_and_reviews.ts"
import { webhooksMigration } from "./0010_webhooks.ts"
import { listIndexesMigration } from "./0020_list_indexes.ts"
import { reviewWritesMigration } from "./0030_review_writes.ts"
import { productQuestionsMigration } from "./0040_product_questions.ts"
import { setupMigration } from "./0050_setup.ts"
import { rateLimitSpendMigration } from "./0060_rate_limit_spend.ts"
import { instanceSecretsMigration } from "./0070_instance_secrets.ts"
import { uniqueSecretKeyHashMigration } from "./0071_unique_secret_key_hash.ts"
import { editableAutomationMigration } from "./0080_editable_automation.ts"
import { loyaltyAllowancesMigration } from "./0081_loyalty_allowances.ts"
import { webhookSecretRotationMigration } from "./0082_webhook_secret_rotation.ts"
import { webhookRedeliveryMigration } from "./0083_webhook_redelivery.ts"
import { eventFeedMigration } from "./0084_event_feed.ts"
import { webhookDeliveryOrderMigration } from "./0085_webhook_delivery_order.ts"
import { jobsMigration } from "./0086_jobs.ts"
import { idempotencyKeysMigration } from "./0090_idempotency_keys.ts"
import { searchIndexMigration } from "./0092_search_index.ts"
import { workSignalsMigration } from "./0093_work_signals.ts"
import { webhookClaimIndexMigration } from "./0094_webhook_claim_index.ts"
import { deliverySignalPerStatementMigration } from "./0095_delivery_signal_per_statement.ts"
import { bulkEventWritesMigration } from "./0096_bulk_event_writes.ts"
import { embeddedRateLimitSessionsMigration } from "./0100_embedded_rate_limit_sessions.ts"
import { credentialSignalsMigration } from "./0101_credential_signals.ts"
import { reviewValueCountsMigration } from "./0102_review_value_counts.ts"
import { eventOrganizationCheckMigration } from "./0104_event_organization_check.ts"
import { reviewKeysPerStatementMigration } from "./0105_review_keys_per_statement.ts"
import { webhookDeliveryQueueMigration } from "./0107_webhook_delivery_queue.ts"
import { deliveryOutcomesAsArraysMigration } from "./0109_delivery_outcomes_as_arrays.ts"
import { productRatingSumsMigration } from "./0111_product_rating_sums.ts"
import { ordersMigration } from "./0120_orders.ts"
import { syncIndexesMigration } from "./0121_sync_indexes.ts"
import { surveysMigration } from "./0122_surveys.ts"
import { reviewSettingsMigration } from "./0130_review_settings.ts"
import { unsubscribeTokensMigration } from "./0131_unsubscribe_tokens.ts"
import { publishableKeysMigration } from "./0132_publishable_keys.ts"
import { ratingHistogramMigration } from "./0133_rating_histogram.ts"
import { fairDeliveryClaimsMigration } from "./0141_fair_delivery_claims.ts"
import { jobTurnsMigration } from "./0142_job_turns.ts"
import { guidedSetupsMigration } from "./0143_guided_setups.ts"
import { eventFeedPerOrganizationMigration } from "./0144_event_feed_per_organization.ts"
import { fairSurveyClaimsMigration } from "./0145_fair_survey_claims.ts"
import { organizationExternalIdsMigration } from "./0150_organization_external_ids.ts"
import { schemaWorkChannelMigration } from "./0151_schema_work_channel.ts"
import { eventStreamMigration } from "./0152_event_stream.ts"
import { fanOutInTurnMigration } from "./0156_fan_out_in_turn.ts"
import { storefrontVersionsMigration } from "./0160_storefront_versions.ts"
import { exportChunksLz4Migration } from "./0180_export_chunks_lz4.ts"
import { surveysFillfactorMigration } from "./0185_surveys_fillfactor.ts"

export const migrations: ReadonlyArray<Migration> = [
  organizationsMigration,
  rateLimitMigration,
  catalogAndReviewsMigration,
  webhooksMigration,
  listIndexesMigration,
  reviewWritesMigration,
  productQuestionsMigration,
  setupMigration,
  rateLimitSpendMigration,
  instanceSecretsMigration,
  uniqueSecretKeyHashMigration,
  editableAutomationMigration,
  loyaltyAllowancesMigration,
  webhookSecretRotationMigration,
  webhookRedeliveryMigration,
  eventFeedMigration,
  webhookDeliveryOrderMigration,
  jobsMigration,
  idempotencyKeysMigration,
  searchIndexMigration,
  workSignalsMigration,
  webhookClaimIndexMigration,
  deliverySignalPerStatementMigration,
  bulkEventWritesMigration,
  embeddedRateLimitSessionsMigration,
  credentialSignalsMigration,
  reviewValueCountsMigration,
  eventOrganizationCheckMigration,
  reviewKeysPerStatementMigration,
  webhookDeliveryQueueMigration,
  deliveryOutcomesAsArraysMigration,
  productRatingSumsMigration,
  ordersMigration,
  syncIndexesMigration,
  surveysMigration,
  reviewSettingsMigration,
  unsubscribeTokensMigration,
  publishableKeysMigration,
  ratingHistogramMigration,
  fairDeliveryClaimsMigration,
  jobTurnsMigration,
  guidedSetupsMigration,
  eventFeedPerOrganizationMigration,
  fairSurveyClaimsMigration,
  organizationExternalIdsMigration,
  schemaWorkChannelMigration,
  eventStreamMigration,
  fanOutInTurnMigration,
  storefrontVersionsMigration,
  exportChunksLz4Migration,
  surveysFillfactorMigration
]
