// page_size and sort_by as DECISIONS.md has them.
import { invalidArgument } from "../../errors.js";
import type { ListSpec, SortOrder } from "./types.js";

export const defaultPageSize = 20;
export const maxPageSize = 200;

/** 0 → 20, above 200 → 200, negative → InvalidArgument. */
export function normalizePageSize(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 0) {
    throw invalidArgument(`page_size must be a non-negative integer, got ${pageSize}`);
  }
  if (pageSize === 0) return defaultPageSize;
  return Math.min(pageSize, maxPageSize);
}

/**
 * `field`, `field asc`, `field desc` or `field des`, case-insensitive, any whitespace. Empty →
 * the spec's default field ascending.
 */
export function parseSortBy(spec: ListSpec, sortBy: string): SortOrder {
  const words = sortBy.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { field: spec.defaultSort, desc: false };
  const [field, direction = "asc"] = words;
  if (words.length > 2 || !["asc", "desc", "des"].includes(direction)) {
    throw invalidArgument(
      `invalid sort_by "${sortBy}": expected "<field>", "<field> asc" or "<field> desc"`,
    );
  }
  if (!Object.hasOwn(spec.fields, field!)) {
    throw invalidArgument(
      `invalid sort_by field "${field}" for ${spec.resource}s: valid fields are ${Object.keys(spec.fields).join(", ")}`,
    );
  }
  return { field: field!, desc: direction !== "asc" };
}
