/**
 * Branded identifiers. Every identifier of the API is a UUID string; the brand keeps a review id from being passed
 * where a product id is expected.
 */
import { Schema, SchemaTransformation } from "effect"

/**
 * A UUID string (any version), accepted in either letter case and decoded to lower case, so an id is the same
 * string on every store and in every answer whatever case a caller sent (PostgreSQL's `uuid` type ignores case,
 * a memory map does not).
 */
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** Whether `s` has a UUID's shape, in either letter case (for values read outside a Schema: filters, cursors). */
export const isUuid = (s: string): boolean => uuidPattern.test(s)

export const Uuid = Schema.String.pipe(Schema.check(Schema.isUUID()), Schema.decode(SchemaTransformation.toLowerCase()))

export const OrganizationId = Uuid.pipe(Schema.brand("OrganizationId"))
export type OrganizationId = typeof OrganizationId.Type
export const SecretKeyId = Uuid.pipe(Schema.brand("SecretKeyId"))
export type SecretKeyId = typeof SecretKeyId.Type
export const PublishableKeyId = Uuid.pipe(Schema.brand("PublishableKeyId"))
export type PublishableKeyId = typeof PublishableKeyId.Type
export const UserId = Uuid.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type
export const SiteId = Uuid.pipe(Schema.brand("SiteId"))
export type SiteId = typeof SiteId.Type
export const IntegrationId = Uuid.pipe(Schema.brand("IntegrationId"))
export type IntegrationId = typeof IntegrationId.Type
export const LoyaltyProgramId = Uuid.pipe(Schema.brand("LoyaltyProgramId"))
export type LoyaltyProgramId = typeof LoyaltyProgramId.Type
export const WishlistId = Uuid.pipe(Schema.brand("WishlistId"))
export type WishlistId = typeof WishlistId.Type
export const ProductId = Uuid.pipe(Schema.brand("ProductId"))
export type ProductId = typeof ProductId.Type
export const ProductVariantId = Uuid.pipe(Schema.brand("ProductVariantId"))
export type ProductVariantId = typeof ProductVariantId.Type
export const CustomerId = Uuid.pipe(Schema.brand("CustomerId"))
export type CustomerId = typeof CustomerId.Type
export const OrderId = Uuid.pipe(Schema.brand("OrderId"))
export type OrderId = typeof OrderId.Type
export const SurveyId = Uuid.pipe(Schema.brand("SurveyId"))
export type SurveyId = typeof SurveyId.Type
export const ReviewId = Uuid.pipe(Schema.brand("ReviewId"))
export type ReviewId = typeof ReviewId.Type
export const ReviewReplyId = Uuid.pipe(Schema.brand("ReviewReplyId"))
export type ReviewReplyId = typeof ReviewReplyId.Type
export const ProductQuestionId = Uuid.pipe(Schema.brand("ProductQuestionId"))
export type ProductQuestionId = typeof ProductQuestionId.Type
export const ProductQuestionAnswerId = Uuid.pipe(Schema.brand("ProductQuestionAnswerId"))
export type ProductQuestionAnswerId = typeof ProductQuestionAnswerId.Type
export const WebhookId = Uuid.pipe(Schema.brand("WebhookId"))
export type WebhookId = typeof WebhookId.Type
export const WebhookDeliveryId = Uuid.pipe(Schema.brand("WebhookDeliveryId"))
export type WebhookDeliveryId = typeof WebhookDeliveryId.Type
export const DomainEventId = Uuid.pipe(Schema.brand("DomainEventId"))
export type DomainEventId = typeof DomainEventId.Type
export const SurveyFlowId = Uuid.pipe(Schema.brand("SurveyFlowId"))
export type SurveyFlowId = typeof SurveyFlowId.Type
export const EmailTemplateId = Uuid.pipe(Schema.brand("EmailTemplateId"))
export type EmailTemplateId = typeof EmailTemplateId.Type
export const ImportJobId = Uuid.pipe(Schema.brand("ImportJobId"))
export type ImportJobId = typeof ImportJobId.Type
export const FileId = Uuid.pipe(Schema.brand("FileId"))
export type FileId = typeof FileId.Type
