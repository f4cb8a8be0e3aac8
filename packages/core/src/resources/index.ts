import { registerResources } from "../engine/registry.js"
import type { AnyResource } from "../engine/resource.js"
import { catalogResources } from "../catalogs/resources.js"
import { events } from "../events/events.js"
import { customers } from "./customers.js"
import { financialAccounts } from "./financial-accounts.js"
import { financialCategories } from "./financial-categories.js"
import { financialTransactions } from "./financial-transactions.js"
import { integrationEntityMappings } from "./integration-entity-mappings.js"
import { payables } from "./payables.js"
import { products } from "./products.js"
import { quotes } from "./quotes.js"
import { salesOrders } from "./sales-orders.js"
import { invoices } from "./invoices.js"
import { fiscalRulesBr } from "./fiscal-rules-br.js"
import { purchaseInvoices } from "./purchase-invoices.js"
import { receivables } from "./receivables.js"
import { suppliers } from "./suppliers.js"
import { emailDispatches, tenantEmailIdentities } from "./email.js"
import { customerSubscriptions, subscriptionPlans } from "./subscriptions.js"
import { supportTickets } from "./support-tickets.js"
import { webhookDeliveries } from "../webhooks/deliveries.js"
import { webhookEndpoints } from "../webhooks/endpoints.js"

/** Business resources that take writes, in the order transports present them. Adding a resource is adding it here. */
export const resources: ReadonlyArray<AnyResource> = [
  products,
  customers,
  suppliers,
  financialAccounts,
  financialCategories,
  financialTransactions,
  payables,
  receivables,
  purchaseInvoices,
  integrationEntityMappings,
  quotes,
  salesOrders,
  invoices,
  fiscalRulesBr
]

/**
 * Written by the embedding app (the product panel) through core only: no REST route, no
 * MCP tool, but their writes are events like any other (spec "Events").
 */
export const panelResources: ReadonlyArray<AnyResource> = [
  subscriptionPlans,
  customerSubscriptions,
  supportTickets,
  emailDispatches,
  tenantEmailIdentities
]

/** The tenant's webhook configuration and delivery log (one permission code, `webhook-endpoints`), no events. */
export const webhookResources: ReadonlyArray<AnyResource> = [webhookEndpoints, webhookDeliveries]

/** Everything every transport serves: business resources, the change feed, webhooks, and the read-only reference catalogs. */
export const allResources: ReadonlyArray<AnyResource> = [...resources, ...panelResources, events, ...webhookResources, ...catalogResources]

registerResources(allResources)

/** What REST and MCP serve: everything but the panel-only resources. */
export const publicResources = (registry: ReadonlyArray<AnyResource>): ReadonlyArray<AnyResource> =>
  registry.filter((resource) => !resource.panelOnly)

export {
  customerSubscriptions,
  customers,
  emailDispatches,
  events,
  financialAccounts,
  financialCategories,
  financialTransactions,
  fiscalRulesBr,
  integrationEntityMappings,
  invoices,
  payables,
  products,
  purchaseInvoices,
  quotes,
  receivables,
  salesOrders,
  subscriptionPlans,
  suppliers,
  supportTickets,
  tenantEmailIdentities,
  webhookDeliveries,
  webhookEndpoints
}
