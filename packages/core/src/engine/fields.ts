/** PostgreSQL's `integer`: ids and whole numbers above it name nothing and would overflow the column. */
export const INT4_MAX = 2_147_483_647

/** The value types a list filter understands (spec "Filter operators"). */
export type FieldType = "string" | "number" | "boolean" | "date" | "datetime" | "uuid"

export type Operator =
  | "eq"
  | "neq"
  | "gt"
  | "gte"
  | "lt"
  | "lte"
  | "contains"
  | "not_contains"
  | "is_null"
  | "is_not_null"

export const OPERATORS: ReadonlyArray<Operator> = [
  "eq",
  "neq",
  "gt",
  "gte",
  "lt",
  "lte",
  "contains",
  "not_contains",
  "is_null",
  "is_not_null"
]

export const operatorsForType: Record<FieldType, ReadonlyArray<Operator>> = {
  string: ["eq", "neq", "contains", "not_contains"],
  number: ["eq", "neq", "gt", "gte", "lt", "lte"],
  boolean: ["eq", "neq"],
  date: ["eq", "neq", "gt", "gte", "lt", "lte"],
  datetime: ["eq", "neq", "gt", "gte", "lt", "lte"],
  uuid: ["eq", "neq"]
}

/** A field a list can be filtered or sorted on. Column SQL comes only from here, never from the request. */
export interface FilterField {
  readonly type: FieldType
  /** Whether the stored value may be null; only nullable fields accept `is_null` / `is_not_null`. */
  readonly nullable?: boolean
  /** Operators beyond the default for the type are never added; a subset narrows them. */
  readonly operators?: ReadonlyArray<Operator>
  /** SQL expression over the row alias `r`; defaults to `r.<field>`. */
  readonly sql?: string
  /** A JSON array of strings: `eq` means "has the element", `contains` means "an element contains". */
  readonly array?: boolean
  readonly sortable?: boolean
  /** `eq`/`neq` ignore case (codes such as ISO2). */
  readonly caseInsensitive?: boolean
  readonly description?: string
}

export const allowedOperators = (field: FilterField): ReadonlyArray<Operator> => {
  const base = field.operators ?? operatorsForType[field.type]
  return field.nullable ? [...base, "is_null", "is_not_null"] : base
}

export const fieldSql = (name: string, field: FilterField): string => field.sql ?? `r.${name}`

export const sqlTypeOf: Record<FieldType, string> = {
  string: "text",
  number: "numeric",
  boolean: "boolean",
  date: "date",
  datetime: "timestamptz",
  uuid: "uuid"
}
