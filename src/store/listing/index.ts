// One list machinery for experiments, pipelines, runs and jobs: page_size, sort_by, filter and
// page tokens as DECISIONS.md has them, keyset pagination, total_size.
//
// The page's ids and the count come from parameterised SQL (so that IS_SUBSTRING can escape
// LIKE wildcards, which Prisma's `contains` does not, and the keyset seek is one index range
// scan); the rows themselves are then loaded through Prisma by id, with the caller's select/omit.
import { invalidArgument } from "../../errors.js";
import type { Database } from "../database.js";
import { compileFilter } from "./filter.js";
import { parseFilter, type ParsedFilter } from "./filter-text.js";
import { badToken, decodePageToken, encodePageToken } from "./page-token.js";
import { normalizePageSize, parseSortBy } from "./sort.js";
import { countQuery, pageQuery, pageSegments, type Condition, type KeysetPosition, type SqlQuery, type SqlValue } from "./sql.js";
import type { ListField, ListOptions, ListPage, ListRequest, ListSpec, SortOrder } from "./types.js";

export type { ListField, ListFieldType, ListModel, ListOptions, ListPage, ListRequest, ListSpec, ScopeValue, SortOrder } from "./types.js";
export { experimentList, jobList, pipelineList, runList } from "./resources.js";
export { normalizePageSize, parseSortBy, defaultPageSize, maxPageSize } from "./sort.js";
export { parseFilter, decodeFilterText, canonicalFilter, type ParsedFilter } from "./filter-text.js";
export { compileFilter } from "./filter.js";
export { encodePageToken, decodePageToken, type PageTokenContent } from "./page-token.js";

/** A list request with everything validated: what to query, independent of the database. */
export interface ResolvedListRequest {
  pageSize: number;
  sort: SortOrder;
  filter: ParsedFilter;
  /** Filter conditions (scope not included). */
  conditions: Condition[];
  /** Start of the page (inclusive), from the page token. */
  after?: KeysetPosition;
}

/**
 * Validates a list request. With a page token, sort and filter come from the token; a sort_by or
 * filter sent alongside must equal the token's. Throws InvalidArgument for client mistakes.
 */
export function resolveListRequest(spec: ListSpec, request: ListRequest): ResolvedListRequest {
  const pageSize = normalizePageSize(request.pageSize);
  if (request.pageToken.trim() === "") {
    const sort = parseSortBy(spec, request.sortBy);
    const filter = parseFilter(request.filter);
    return { pageSize, sort, filter, conditions: compileFilter(spec, filter.filter) };
  }

  const token = decodePageToken(request.pageToken);
  if (token.resource !== spec.resource) {
    throw badToken(`it was issued for listing ${token.resource}s, not ${spec.resource}s`);
  }
  const field = Object.hasOwn(spec.fields, token.sort.field) ? spec.fields[token.sort.field]! : undefined;
  if (!field) throw badToken("unknown sort field");
  let filter: ParsedFilter;
  let conditions: Condition[];
  try {
    filter = parseFilter(token.filter);
    conditions = compileFilter(spec, filter.filter);
  } catch {
    throw badToken("bad filter");
  }
  const after = { value: tokenValue(field, token.after.value), id: token.after.id };

  const sortMismatch = () => {
    const requested = parseSortBy(spec, request.sortBy);
    return requested.field !== token.sort.field || requested.desc !== token.sort.desc;
  };
  const filterMismatch = () => parseFilter(request.filter).canonical !== filter.canonical;
  if ((request.sortBy.trim() !== "" && sortMismatch()) || (request.filter.trim() !== "" && filterMismatch())) {
    throw invalidArgument("page token does not match the supplied sort_by and/or filter");
  }
  return { pageSize, sort: token.sort, filter, conditions, after };
}

/** A token's sort value as a SQL parameter of the column's type. */
function tokenValue(field: ListField, value: string | null): SqlValue | null {
  if (value === null) {
    if (!field.nullable) throw badToken("bad position");
    return null;
  }
  switch (field.type) {
    case "string":
      return value;
    case "millis":
      if (!/^-?\d{1,19}$/.test(value)) throw badToken("bad position");
      return BigInt(value);
    case "int":
    case "storageState": {
      const n = /^-?\d{1,16}$/.test(value) ? Number(value) : NaN;
      if (!Number.isSafeInteger(n)) throw badToken("bad position");
      return n;
    }
  }
}

/** Equality conditions for a caller's scope; an undeclared key is a programming error. */
export function scopeConditions(spec: ListSpec, scope: ListOptions["scope"] = {}): Condition[] {
  return Object.entries(scope).flatMap(([key, value]): Condition[] => {
    if (value === undefined) return [];
    const column = Object.hasOwn(spec.scopes, key) ? spec.scopes[key] : undefined;
    if (column === undefined) throw new Error(`listing ${spec.resource}s: "${key}" is not a declared scope`);
    return [value === null ? { kind: "isNull", column } : { kind: "compare", column, op: "=", value }];
  });
}

/**
 * The SQL a resolved request runs: the page queries, given their row limit (segments read in
 * order until page size + 1 rows are in; one segment except for nullable sort columns), and the
 * count. Exposed for tests and query-plan checks.
 */
export function listQueries(
  provider: Database["provider"],
  spec: ListSpec,
  resolved: ResolvedListRequest,
  scope?: ListOptions["scope"],
): { pages: Array<(limit: number) => SqlQuery>; count: SqlQuery } {
  const field = spec.fields[resolved.sort.field]!;
  const matching = [...scopeConditions(spec, scope), ...resolved.conditions];
  const segments = pageSegments(field, resolved.sort.desc, resolved.after);
  return {
    pages: segments.map(
      (segment) => (limit: number) =>
        pageQuery(provider, spec.table, field, resolved.sort.desc, [...matching, ...segment.where], segment.order, limit),
    ),
    count: countQuery(provider, spec.table, matching),
  };
}

interface RowDelegate {
  findMany(args: object): Promise<Array<Record<string, unknown>>>;
}

type IdRow = { id: string; v: string | null };

/**
 * One page of a resource. `Row` is the Prisma row type the caller's select/omit produces (the
 * full model row by default); rows come back in list order.
 */
export async function listPage<Row = Record<string, unknown>>(
  db: Database,
  spec: ListSpec,
  request: ListRequest,
  options: ListOptions = {},
): Promise<ListPage<Row>> {
  const resolved = resolveListRequest(spec, request);
  const { pages, count } = listQueries(db.provider, spec, resolved, options.scope);
  const run = <T>(q: SqlQuery) => db.prisma.$queryRawUnsafe<T>(q.text, ...q.params);

  const wanted = resolved.pageSize + 1;
  const readIds = async (): Promise<IdRow[]> => {
    const ids: IdRow[] = [];
    for (const page of pages) {
      ids.push(...(await run<IdRow[]>(page(wanted - ids.length))));
      if (ids.length >= wanted) break;
    }
    return ids;
  };
  const [idRows, countRows] = await Promise.all([readIds(), run<Array<{ n: bigint | number }>>(count)]);

  const pageIds = idRows.slice(0, resolved.pageSize).map((r) => r.id);
  const next = idRows[resolved.pageSize];
  const nextPageToken = next
    ? encodePageToken({
        resource: spec.resource,
        sort: resolved.sort,
        filter: resolved.filter.canonical,
        after: { value: next.v, id: next.id },
      })
    : "";
  return {
    rows: (await loadRows(db, spec, pageIds, options)) as Row[],
    totalSize: Number(countRows[0]?.n ?? 0),
    nextPageToken,
  };
}

/** Loads rows by id through Prisma, in the order of `ids`; rows deleted meanwhile are skipped. */
async function loadRows(db: Database, spec: ListSpec, ids: string[], options: ListOptions): Promise<unknown[]> {
  if (ids.length === 0) return [];
  const delegate = (db.prisma as unknown as Record<ListSpec["model"], RowDelegate>)[spec.model];
  const args: Record<string, unknown> = { where: { id: { in: ids } } };
  if (options.select) args.select = { ...options.select, id: true };
  if (options.omit) args.omit = { ...options.omit, id: false };
  const rows = await delegate.findMany(args);
  const byId = new Map(rows.map((row) => [row.id as string, row]));
  return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)] : []));
}
