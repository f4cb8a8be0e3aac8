import { Schema } from "effect"
import { column, id, stored, timestamps } from "../engine/field.js"
import { defineResource, type RecordType } from "../engine/resource.js"
import { datetime, metadata, RequiredText, text, Uuid } from "./common.js"

/** Lower-case codes: `customer`, `sales_order`, `synced`. */
const Code = (max: number, what: string) =>
  RequiredText(max).check(Schema.makeFilter((value: string) => /^[a-z][a-z0-9_.-]*$/.test(value) || `must be a lower-case ${what} (letters, digits, _ . -)`))

const code = (max: number, what: string, options: { readonly required?: boolean; readonly input?: "both" | "create"; readonly description: string }) =>
  column<string, string>({ type: "text", output: Schema.String, inputSchema: Code(max, what), filter: true, ...options })

const uuidField = (description: string) =>
  column<string, string>({ type: "uuid", output: Schema.String, inputSchema: Uuid, required: true, input: "create", filter: true, description })

/**
 * Which record of an outside system (an e-commerce store, another ERP) stands for
 * which record here, per native integration. Writes record no events (spec "Events",
 * rule 4); who created, changed and deleted each mapping is kept on it.
 */
export const integrationEntityMappings = defineResource({
  name: "integration-entity-mappings",
  singular: "integration-entity-mapping",
  title: "Integration entity mapping",
  description: "Links between this ERP's records and an outside system's, per native integration (no events).",
  notFoundCode: "INTEGRATION_ENTITY_MAPPING_NOT_FOUND",
  table: "integration_entity_mappings",
  fields: {
    id: id(),
    tenant_integration_id: uuidField("The native integration (installation) the mapping belongs to"),
    entity_type: code(64, "entity type", { required: true, input: "create", description: "What is mapped, e.g. customer, product, sales_order" }),
    internal_entity_id: uuidField("The record's id here"),
    external_entity_id: text(255, { required: true, description: "The record's id in the other system" }),
    mapping_origin: code(32, "origin", { input: "create", description: "How the link was made: manual (default), automatic, import" }),
    sync_status: code(32, "status", { description: "synced (default), pending, error, …" }),
    metadata: metadata(),
    last_synced_at: datetime({ nullable: true, filter: { sortable: true } }),
    created_by_user_id: stored("uuid", Schema.String, { nullable: true }),
    updated_by_user_id: stored("uuid", Schema.String, { nullable: true }),
    deleted_by_user_id: stored("uuid", Schema.String, { nullable: true }),
    ...timestamps()
  },
  defaultSort: { field: "created_at", order: "asc" },
  writes: {
    example: {
      tenant_integration_id: "6f1c2a8e-3b4d-4c5e-8f90-1a2b3c4d5e6f",
      entity_type: "customer",
      internal_entity_id: "0b9e7c1a-2d3f-4e5a-9b8c-7d6e5f4a3b2c",
      external_entity_id: "shopify:customer:7781",
      sync_status: "synced"
    },
    unique: ["internal_entity_id", "tenant_integration_id"]
  },
  stamps: { created: "created_by_user_id", updated: "updated_by_user_id", deleted: "deleted_by_user_id" }
})

export type IntegrationEntityMapping = RecordType<typeof integrationEntityMappings>
