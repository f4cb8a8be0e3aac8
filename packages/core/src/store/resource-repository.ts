import { Effect, Layer } from "effect"
import { ResourceRepository } from "../engine/repository.js"
import { makeChildWrites } from "./resource-repository/child-writes.js"
import { makeInserts } from "./resource-repository/inserts.js"
import { makePages } from "./resource-repository/pages.js"
import { makeRecordReads } from "./resource-repository/record-reads.js"
import { makeRepositorySql } from "./resource-repository/repository-sql.js"
import { makeUpdates } from "./resource-repository/updates.js"
import { makeWriteSql } from "./resource-repository/write-sql.js"

/**
 * The resource repository over SQL, assembled from its parts in `resource-repository/`: a list's
 * pages, reads of records, inserts, updates and child writes. Filters, keyset bounds and scope
 * conditions are compiled by the pure modules of `sql/`.
 */
export const makeResourceRepository = Effect.gen(function* () {
  const db = yield* makeRepositorySql
  const writeSql = makeWriteSql(db)
  const { page, pageAnswers, pageLines, rangeEnd, count } = makePages(db)
  const { byIds, findMany, findOne, findById, missing } = makeRecordReads(db)
  const { insert, insertReturning, nextNumber } = makeInserts(db, writeSql, byIds)
  const { update, updateReturning, setDeleted } = makeUpdates(db, writeSql, byIds)
  const writeChildren = makeChildWrites(db, writeSql)
  return ResourceRepository.of({ page, pageAnswers, pageLines, rangeEnd, count, findOne, findMany, findById, findByIds: byIds, missing, insert, insertReturning, update, updateReturning, setDeleted, writeChildren, nextNumber })
})

export const layerResourceRepository = Layer.effect(ResourceRepository, makeResourceRepository)
