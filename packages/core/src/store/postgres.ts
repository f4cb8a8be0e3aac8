import * as PgClient from "@effect/sql-pg/PgClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import { Layer, Redacted } from "effect"
import pg from "pg"
import { textParsers } from "./types.js"

const getTypeParser = ((oid: number, format?: string) =>
  textParsers[oid] ?? pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser

/** PostgreSQL as a `SqlClient`, with the same value parsing as the embedded store. */
export const layerPostgres = (url: string): Layer.Layer<SqlClient.SqlClient, unknown> =>
  PgClient.layer({
    url: Redacted.make(url),
    types: { getTypeParser },
    applicationName: "erp"
  })
