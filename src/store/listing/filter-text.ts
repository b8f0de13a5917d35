// The `filter` query parameter: JSON, URL-encoded JSON (once or twice, as the KFP UI sends it), or
// base64 (standard or URL-safe) of JSON, parsed into an api.Filter. Also the canonical text of a
// filter, which page tokens carry and compare.
import { create, fromJson, toJson, type JsonValue } from "@bufbuild/protobuf";
import { FilterSchema, PredicateSchema, Predicate_OpSchema, type Filter } from "../../../gen/proto/kfp/filter_pb.js";
import { invalidArgument } from "../../errors.js";

export interface ParsedFilter {
  filter: Filter;
  /** Canonical JSON of the filter; "" when it has no predicates. */
  canonical: string;
}

// Layers of encoding tried before giving up; the UI uses two, base64 may sit under one or two.
const maxDecodeLayers = 5;

/**
 * Finds the JSON object in a filter text: as is, or after removing URL-encoding layers (one at a
 * time, stopping at the first layer that is JSON), or as base64 at any of those layers.
 * Throws an Error whose message says why nothing matched.
 */
export function decodeFilterText(raw: string): Record<string, unknown> {
  let text = raw.trim();
  let jsonError: string | undefined;
  for (let layer = 0; layer <= maxDecodeLayers; layer++) {
    const asJson = parseJsonObject(text);
    if (asJson.value) return asJson.value;
    if (asJson.error) jsonError = asJson.error;
    const fromBase64 = decodeBase64Json(text);
    if (fromBase64) return fromBase64;
    const next = urlDecodeLayer(text).trim();
    if (next === text) break;
    text = next;
  }
  throw new Error(jsonError ?? "not JSON, URL-encoded JSON or base64-encoded JSON");
}

/** Parses the filter parameter; "" (or blank) is no filter. InvalidArgument on any failure. */
export function parseFilter(raw: string): ParsedFilter {
  if (raw.trim() === "") return { filter: create(FilterSchema), canonical: "" };
  let filter: Filter;
  try {
    const json = decodeFilterText(raw);
    filter = fromJson(FilterSchema, upperCaseOps(json) as JsonValue, { ignoreUnknownFields: true });
  } catch (err) {
    throw invalidArgument(`invalid filter "${raw}": ${err instanceof Error ? err.message : String(err)}`);
  }
  return { filter, canonical: canonicalFilter(filter) };
}

/**
 * Stable text of a filter: proto JSON of each predicate (int64 as strings, enums as names),
 * sorted, since predicates are AND-ed and their order means nothing.
 */
export function canonicalFilter(filter: Filter): string {
  if (filter.predicates.length === 0) return "";
  const predicates = filter.predicates.map((p) => JSON.stringify(toJson(PredicateSchema, p))).sort();
  return `{"predicates":[${predicates.join(",")}]}`;
}

function parseJsonObject(text: string): { value?: Record<string, unknown>; error?: string } {
  if (!text.startsWith("{") && !text.startsWith("[")) return {};
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      return { value: value as Record<string, unknown> };
    }
    return { error: "the filter must be a JSON object" };
  } catch (err) {
    return { error: err instanceof Error ? err.message : String(err) };
  }
}

const base64Text = /^[A-Za-z0-9+/_-]+={0,2}$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** base64 or base64url (padding optional) of a UTF-8 JSON object, else undefined. */
function decodeBase64Json(text: string): Record<string, unknown> | undefined {
  // A '+' of standard base64 turns into a space when form decoding ran over it.
  const compact = text.replace(/ /g, "+");
  if (!base64Text.test(compact)) return undefined;
  const body = compact.replace(/=+$/, "").replace(/-/g, "+").replace(/_/g, "/");
  if (body.length % 4 === 1) return undefined;
  let decoded: string;
  try {
    decoded = utf8.decode(Buffer.from(body, "base64"));
  } catch {
    return undefined;
  }
  return parseJsonObject(decoded.trim()).value;
}

const lenientUtf8 = new TextDecoder("utf-8");

/**
 * One layer of query-string decoding (Go's url.QueryUnescape, leniently): '+' is a space, runs
 * of %XX escapes become their UTF-8 text, a '%' not followed by two hex digits stays as it is.
 */
export function urlDecodeLayer(text: string): string {
  return text.replace(/\+/g, " ").replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return lenientUtf8.decode(Buffer.from(run.replace(/%/g, ""), "hex"));
    }
  });
}

/**
 * `"op": "equals"` is read as EQUALS (enum names are otherwise case-sensitive in proto JSON), and
 * an op name that is not one is an error (with ignoreUnknownFields it would silently be UNKNOWN).
 */
function upperCaseOps(json: Record<string, unknown>): Record<string, unknown> {
  const predicates = json.predicates;
  if (!Array.isArray(predicates)) return json;
  return {
    ...json,
    predicates: predicates.map((p: unknown) => {
      if (p === null || typeof p !== "object" || typeof (p as { op?: unknown }).op !== "string") return p;
      const op = (p as { op: string }).op.trim().toUpperCase();
      if (!Predicate_OpSchema.values.some((v) => v.name === op)) throw new Error(`unknown predicate operation "${(p as { op: string }).op}"`);
      return { ...(p as object), op };
    }),
  };
}
