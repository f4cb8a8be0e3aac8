import { Effect } from "effect"
import type { ChildPlan } from "../../engine/draft.js"
import type { ChildCollection } from "../../engine/resource.js"
import type { RepositorySql } from "./repository-sql.js"
import { userErrors, type WriteSql } from "./write-sql.js"

/** A collection's children written in statements of their own, after their parent's (inside a transaction). */
export const makeChildWrites = ({ sql, table }: RepositorySql, { setList, insertRows }: WriteSql) => {
  const writeChildren = (collection: ChildCollection, tenantId: string, parentId: string, plan: ChildPlan) =>
    Effect.gen(function* () {
      const owned = sql`tenant_id = ${tenantId}::uuid AND ${sql.literal(collection.parentKey)} = ${parentId}::uuid`
      if (plan.remove.length > 0) {
        yield* collection.softDelete
          ? sql`UPDATE ${table(collection.table)} SET deleted_at = now(), updated_at = now() WHERE ${owned} AND id IN ${sql.in(plan.remove)}`
          : sql`DELETE FROM ${table(collection.table)} WHERE ${owned} AND id IN ${sql.in(plan.remove)}`
      }
      for (const change of plan.update) {
        yield* sql`UPDATE ${table(collection.table)} SET ${sql.csv(setList(collection.columns, change.values))} WHERE ${owned} AND id = ${change.id}::uuid`
      }
      if (plan.insert.length > 0) yield* insertRows(collection, tenantId, sql`${parentId}::uuid`, plan.insert)
    }).pipe(Effect.catchTag("SqlError", userErrors(collection.name, collection.fields)))

  return writeChildren
}
