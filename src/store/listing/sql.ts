// SQL for a list page, for SQLite and PostgreSQL. Identifiers come from the list specs only;
// every value is a bound parameter. A page query is a keyset seek on the row value
// (sort column, id) (or the column alone when it is unique), which both databases answer with an
// index range scan in index order: the cost of a page does not grow with the table or with the
// page's position. Nullable columns are read in two segments (NULLs, the rest) for the same reason.
import type { Provider } from "../migrate.js";
import { SqlParameters } from "../sql-parameters.js";
import type { ListField } from "./types.js";

export type SqlValue = string | number | bigint;

/** A database-neutral condition, produced from filters, scopes and page tokens. */
export type Condition =
  | { kind: "compare"; column: string; op: "=" | "<>" | "<" | "<=" | ">" | ">="; value: SqlValue }
  | { kind: "in"; column: string; values: SqlValue[] }
  /** Case-insensitive literal substring: '%' and '_' in `needle` match only themselves. */
  | { kind: "substring"; column: string; needle: string }
  | { kind: "isNull"; column: string }
  | { kind: "isNotNull"; column: string }
  /** (column, "id") op (value, id): a keyset position. */
  | { kind: "rowCompare"; column: string; op: "<=" | ">="; value: SqlValue; id: string }
  | { kind: "and"; conditions: Condition[] }
  | { kind: "or"; conditions: Condition[] };

export interface SqlQuery {
  text: string;
  params: SqlValue[];
}

class SqlWriter {
  private readonly parameters: SqlParameters<SqlValue>;

  constructor(private readonly provider: Provider) {
    this.parameters = new SqlParameters<SqlValue>(provider);
  }

  get params(): SqlValue[] {
    return this.parameters.values;
  }

  param(value: SqlValue): string {
    return this.parameters.add(value);
  }

  condition(c: Condition): string {
    switch (c.kind) {
      case "compare":
        return `${quote(c.column)} ${c.op} ${this.param(c.value)}`;
      case "in":
        if (c.values.length === 0) return "1 = 0";
        return `${quote(c.column)} IN (${c.values.map((v) => this.param(v)).join(", ")})`;
      case "substring": {
        // SQLite's LIKE folds ASCII case; ILIKE is PostgreSQL's case-insensitive LIKE.
        const like = this.provider === "postgresql" ? "ILIKE" : "LIKE";
        return `${quote(c.column)} ${like} ${this.param(`%${escapeLike(c.needle)}%`)} ESCAPE '\\'`;
      }
      case "isNull":
        return `${quote(c.column)} IS NULL`;
      case "isNotNull":
        return `${quote(c.column)} IS NOT NULL`;
      case "rowCompare":
        return `(${quote(c.column)}, "id") ${c.op} (${this.param(c.value)}, ${this.param(c.id)})`;
      case "and":
        if (c.conditions.length === 0) return "1 = 1";
        return `(${c.conditions.map((x) => this.condition(x)).join(" AND ")})`;
      case "or":
        if (c.conditions.length === 0) return "1 = 0";
        return `(${c.conditions.map((x) => this.condition(x)).join(" OR ")})`;
    }
  }

  where(conditions: Condition[]): string {
    return conditions.length === 0 ? "" : ` WHERE ${conditions.map((c) => this.condition(c)).join(" AND ")}`;
  }
}

export function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}

/** Escapes LIKE's wildcards and the escape character itself (ESCAPE '\'). */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A sort position in a page token, as the database reads it back. */
export interface KeysetPosition {
  /** The sort column's value (SQL parameter type), or null for a NULL in a nullable column. */
  value: SqlValue | null;
  id: string;
}

/** Part of a page's order: rows matching `where`, ordered by `order` (all in one direction). */
export interface Segment {
  where: Condition[];
  order: string[];
}

/**
 * The index-friendly pieces that, concatenated, read a list from `after` (inclusive) on, in the
 * order (column, id), both ascending or both descending. A unique column needs no id tiebreak.
 * NULLs of a nullable column come first ascending and last descending; they are read in a
 * segment of their own (ordered by id), so that no query mixes NULLs into an index range, which
 * neither database can do without sorting.
 */
export function pageSegments(field: ListField, desc: boolean, after?: KeysetPosition): Segment[] {
  const op = desc ? "<=" : ">=";
  const column = field.column;
  if (column === "id") {
    return [{ where: after ? [{ kind: "compare", column: "id", op, value: after.id }] : [], order: ["id"] }];
  }
  const order = field.unique ? [column] : [column, "id"];
  const seek = (value: SqlValue): Condition =>
    field.unique ? { kind: "compare", column, op, value } : { kind: "rowCompare", column, op, value, id: (after as KeysetPosition).id };
  if (!field.nullable) return [{ where: after && after.value !== null ? [seek(after.value)] : [], order }];

  const nulls = (fromId?: string): Segment => ({
    where: [{ kind: "isNull", column }, ...(fromId === undefined ? [] : [{ kind: "compare", column: "id", op, value: fromId } as const])],
    // Ordering by the (all NULL) column too lets PostgreSQL read the (column, id) index in order.
    order: [column, "id"],
  });
  // A seek excludes NULLs by itself (comparisons with NULL are never true).
  const values = (from?: SqlValue): Segment => ({ where: [from === undefined ? { kind: "isNotNull", column } : seek(from)], order });
  if (!after) return desc ? [values(), nulls()] : [nulls(), values()];
  if (after.value === null) return desc ? [nulls(after.id)] : [nulls(after.id), values()];
  return desc ? [values(after.value), nulls()] : [values(after.value)];
}

/**
 * The ids (and sort values, as text) of up to `limit` rows matching `conditions`, ordered by
 * `order`. Result rows: `{ id: string; v: string | null }`.
 */
export function pageQuery(
  provider: Provider,
  table: string,
  field: ListField,
  desc: boolean,
  conditions: Condition[],
  order: string[],
  limit: number,
): SqlQuery {
  const w = new SqlWriter(provider);
  const where = w.where(conditions);
  const direction = desc ? "DESC" : "ASC";
  const text =
    `SELECT "id", CAST(${quote(field.column)} AS TEXT) AS "v" FROM ${quote(table)}${where}` +
    ` ORDER BY ${order.map((c) => `${quote(c)} ${direction}`).join(", ")} LIMIT ${Math.trunc(limit)}`;
  return { text, params: w.params };
}

/** The number of rows matching `conditions`. Result rows: `{ n: bigint | number }`. */
export function countQuery(provider: Provider, table: string, conditions: Condition[]): SqlQuery {
  const w = new SqlWriter(provider);
  const where = w.where(conditions);
  return { text: `SELECT COUNT(*) AS "n" FROM ${quote(table)}${where}`, params: w.params };
}
