import { createFetchHandler } from "@erp/http"
import { ConfigProvider } from "effect"
import { describe, expect, it } from "vitest"
import { storeKinds, testStore } from "../../../test/support/stores.js"

/** Only these variables, and the tests' secret key (which PostgreSQL requires): nothing comes from the environment. */
const providerOf = (variables: Record<string, string>) =>
  ConfigProvider.fromEnvRecord({ ERP_SECRET_KEY: process.env.ERP_SECRET_KEY!, ...variables })

const metadataOf = async (erp: Awaited<ReturnType<typeof createFetchHandler>>) =>
  (await erp.handler(new Request("http://local/.well-known/oauth-authorization-server"))).json() as Promise<Record<string, unknown>>

const register = (erp: Awaited<ReturnType<typeof createFetchHandler>>) =>
  erp.handler(new Request("http://local/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ client_name: "embedded", redirect_uris: ["http://127.0.0.1:9/callback"] })
  }))

/** An embedding app gives the fetch handler a ConfigProvider of its own: the settings come from it, not from the environment. */
describe.each(storeKinds)("the fetch handler's configProvider on %s", (kind) => {
  it("reads the settings from it, booleans as no/yes, and the handler's options win over it", async () => {
    const provider = providerOf({ ERP_DYNAMIC_REGISTRATION: "No", ERP_PUBLIC_URL: "https://erp.example.com/" })
    const erp = await createFetchHandler({ store: testStore(kind), webhooks: false, configProvider: provider })
    try {
      const metadata = await metadataOf(erp)
      expect(metadata.issuer).toBe("https://erp.example.com")
      expect(metadata).not.toHaveProperty("registration_endpoint")
      expect((await register(erp)).status).toBe(403)
    } finally {
      await erp.dispose()
    }
    const overridden = await createFetchHandler({ store: testStore(kind), webhooks: false, configProvider: provider, oauth: { dynamicRegistration: true } })
    try {
      expect((await metadataOf(overridden)).registration_endpoint).toBe("https://erp.example.com/oauth/register")
    } finally {
      await overridden.dispose()
    }
  })

  it("does not start with a value it cannot use, and says which in one line", async () => {
    await expect(createFetchHandler({ store: testStore(kind), webhooks: false, configProvider: providerOf({ ERP_TRUST_PROXY: "maybe" }) }))
      .rejects.toThrow(/^ERP_TRUST_PROXY must be true, false, 1, 0, yes or no; got "maybe"$/)
    await expect(createFetchHandler({ store: testStore(kind), webhooks: false, configProvider: providerOf({ ERP_TENANT_QUEUE_MS: "soon" }) }))
      .rejects.toThrow(/^ERP_TENANT_QUEUE_MS must be a whole number 1 or more; got "soon"$/)
  })
})
