/**
 * Where storefront widgets come from and which API origin they call: configuration of the host, not data of an
 * organization, so the `Setup` service reads it when it is built rather than from a store. A reference with a
 * default, so `CoreLayer` needs nothing but a store; the HTTP adapter provides it from EMBED_SCRIPT_URL and
 * PUBLIC_API_BASE_URL.
 */
import { Context } from "effect"

/**
 * Where the API serves the widget bundle itself (shared DECISIONS §19): the default `embedScriptUrl` is this path on
 * the API's own base URL. EMBED_SCRIPT_URL overrides it (a CDN copy of the same file).
 */
export const EMBED_SCRIPT_PATH = "/storefront/embed.js"

export interface SetupConfigValues {
  /**
   * Where the storefront widget bundle is published (Setup state `embedScriptUrl`). Undefined: the API's own copy,
   * `EMBED_SCRIPT_PATH` on the API base URL.
   */
  readonly embedScriptUrl: string | undefined
  /**
   * The API origin the widgets should call (Setup state `apiBaseUrl`). Undefined: the origin each call names
   * (`SetupRequest.apiOrigin`, the HTTP adapter passes the origin the request was addressed to).
   */
  readonly apiBaseUrl: string | undefined
  /**
   * The server's own URL (`http://HOST:PORT` of the standalone server), for links made where no request names an
   * origin (the email links a background worker renders) and no `apiBaseUrl` is configured.
   */
  readonly serverUrl?: string | undefined
}

export const SetupConfig = Context.Reference<SetupConfigValues>("feedback/SetupConfig", {
  defaultValue: () => ({ embedScriptUrl: undefined, apiBaseUrl: undefined })
})

/** The last resort of `publicBaseUrl`: a host that configures neither URL gets links that work on its own machine. */
export const DEFAULT_SERVER_URL = "http://localhost:3000"

/**
 * Where links in emails point (`survey.url`, `unsubscribe.url`; shared DECISIONS §17): PUBLIC_API_BASE_URL, else the
 * server's own URL, else `DEFAULT_SERVER_URL`. No trailing slash.
 */
export const publicBaseUrl = (config: SetupConfigValues): string =>
  (config.apiBaseUrl ?? config.serverUrl ?? DEFAULT_SERVER_URL).replace(/\/+$/, "")

/** What one call may say about how it was reached. */
export interface SetupRequest {
  /** The API origin as this caller reached it; used for `apiBaseUrl` when the configuration names none. */
  readonly apiOrigin?: string | undefined
}
