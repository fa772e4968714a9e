/**
 * Where storefront widgets come from and which API origin they call: configuration of the host, not data of an
 * organization, so it is a service the host provides (the HTTP adapter builds it from EMBED_SCRIPT_URL and
 * PUBLIC_API_BASE_URL) rather than something a store reads.
 */
import { Context } from "effect"

export class SetupConfig extends Context.Service<SetupConfig, {
  /** Where the storefront widget bundle is published (Setup state `embedScriptUrl`). */
  readonly embedScriptUrl: string
  /** The API origin the widgets should call (Setup state `apiBaseUrl`). */
  readonly apiBaseUrl: string
}>()("feedback/SetupConfig") {}
