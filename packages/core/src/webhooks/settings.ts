import { Config, Context, Effect, Layer } from "effect"
import { loadConfig } from "../config/load.js"
import { webhookSettings } from "../config/variables.js"

export interface WebhookSettingsShape {
  /**
   * Endpoints may be http and reach private, loopback and link-local addresses
   * (`ERP_WEBHOOKS_ALLOW_PRIVATE`, `erp serve --allow-private-webhooks`): development and tests only.
   */
  readonly allowPrivate: boolean
  /** How long a claimed delivery stays with a dispatcher that stopped answering (`ERP_WEBHOOKS_LEASE_SECONDS`). */
  readonly leaseSeconds: number
}

const fromConfig = Config.all({ allowPrivate: webhookSettings.allowPrivate.config, leaseSeconds: webhookSettings.leaseSeconds.config })

/** The webhook settings the endpoint rules, the test event and the dispatcher follow, read as the host starts. */
export class WebhookSettings extends Context.Service<WebhookSettings, WebhookSettingsShape>()("erp/core/WebhookSettings") {
  /** From the `ConfigProvider` in context; `overrides` (an embedding app's options, the CLI's flags) win. */
  static readonly layer = (overrides: Partial<WebhookSettingsShape> = {}) =>
    Layer.effect(WebhookSettings, Effect.map(loadConfig(fromConfig), (configured) => ({ ...configured, ...overrides })))
}
