/**
 * The core's use-case services, built once over a store: what a host provides a store layer (and an id generator)
 * to, and then calls. Capabilities add their service here.
 */
import { Layer } from "effect"
import { Catalogs } from "./catalog/Catalogs.ts"
import { ProductQuestions } from "./questions/ProductQuestions.ts"
import { Reviews } from "./reviews/Reviews.ts"
import { ReviewWrites } from "./reviews/ReviewWrites.ts"

export const CoreLayer = Layer.mergeAll(Catalogs.layer, Reviews.layer, ReviewWrites.layer, ProductQuestions.layer)
