// Shapes shared by the list machinery: what a listable resource declares about itself, what a
// list request carries, and what a page looks like.

/**
 * How an API key's column is compared and sorted.
 * - `string`: text; filter values are strings (numbers are accepted and compared as their text).
 * - `millis`: BIGINT epoch milliseconds; filter values are epoch seconds (int, long or a decimal
 *   string, compared at whole-second granularity as KFP did) or timestamps (timestamp_value or an
 *   RFC 3339 string, compared to the millisecond).
 * - `storageState`: INTEGER 0 (STORAGESTATE_AVAILABLE) or 1 (STORAGESTATE_ARCHIVED).
 * - `int`: INTEGER; filter values are integers.
 */
export type ListFieldType = "string" | "millis" | "storageState" | "int";

export interface ListField {
  /** Database column name (as in prisma/migrations), e.g. "created_at". */
  column: string;
  type: ListFieldType;
  /**
   * The column may hold NULL. NULL sorts first ascending (last descending) and, for filtering,
   * behaves like the empty string (only for `string` fields).
   */
  nullable?: boolean;
  /**
   * The column has a UNIQUE index of its own: pages order by it alone (no id tiebreak), which
   * lets that index serve the order. Only set it when the database enforces the uniqueness.
   */
  unique?: boolean;
}

/** Prisma client properties of the models this machinery can list. */
export type ListModel = "experiment" | "pipeline" | "run" | "job";

export interface ListSpec {
  /** Singular resource name, used in messages and bound into page tokens. */
  resource: string;
  /** Prisma client property that loads the page's rows, e.g. "run" for `prisma.run`. */
  model: ListModel;
  /** Database table name. Its primary key must be the text column "id". */
  table: string;
  /** API key → column. Every key is both sortable and filterable. */
  fields: Readonly<Record<string, ListField>>;
  /** API key used when sort_by is empty (ascending). */
  defaultSort: string;
  /** Prisma field name → column, for the equality scopes callers may pass (e.g. experimentId). */
  scopes: Readonly<Record<string, string>>;
}

/** The list parameters every v1beta1 List*Request carries (the generated messages fit as is). */
export interface ListRequest {
  pageToken: string;
  pageSize: number;
  sortBy: string;
  filter: string;
}

export interface ListPage<Row> {
  rows: Row[];
  /** Rows matching filter and scope, independent of the page. */
  totalSize: number;
  /** Empty when this is the last page. */
  nextPageToken: string;
}

export type ScopeValue = string | number | bigint | null;

export interface ListOptions {
  /**
   * Equalities AND-ed to everything, counted in total_size, e.g. `{ experimentId: "…" }`. Keys
   * are Prisma field names declared in the spec's `scopes`; `undefined` values are ignored.
   */
  scope?: Readonly<Record<string, ScopeValue | undefined>>;
  /** Prisma `select` for the rows (`id` is added). Exclusive with `omit`. */
  select?: Readonly<Record<string, unknown>>;
  /** Prisma `omit` for the rows, e.g. `{ workflowManifest: true }` (`id` is never omitted). */
  omit?: Readonly<Record<string, boolean>>;
}

/** A resolved sort: API key and direction. */
export interface SortOrder {
  field: string;
  desc: boolean;
}
