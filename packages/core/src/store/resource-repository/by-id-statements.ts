import type * as SqlClient from "effect/sql/SqlClient"
import type { Statement } from "effect/sql/Statement"
import type { AnyResource } from "../../engine/resource.js"
import { statementShape } from "../statement-shapes.js"

type ByIdOptions = { readonly withDeleted?: boolean | undefined; readonly forUpdate?: boolean | undefined }

/**
 * The statements of reads by id, one shape per resource and options (`statementShape`): each is
 * compiled on its first read and its text kept for every later one.
 */
export const byIdStatements = <O extends ByIdOptions>(
  sql: SqlClient.SqlClient,
  build: (resource: AnyResource, tenantId: string, id: string, options: O) => Statement<{ record: string }>
) => {
  const shapesOf = new WeakMap<AnyResource, Map<string, (tenantId: string, id: string) => Statement<{ record: string }>>>()
  return (resource: AnyResource, options: O) => {
    let shapes = shapesOf.get(resource)
    if (shapes === undefined) {
      shapes = new Map()
      shapesOf.set(resource, shapes)
    }
    const variant = `${options.withDeleted === true}:${options.forUpdate === true}`
    let shape = shapes.get(variant)
    if (shape === undefined) {
      shape = statementShape(sql, (tenantId, id) => build(resource, tenantId, id, options))
      shapes.set(variant, shape)
    }
    return shape
  }
}
