// Page tokens: base64url of JSON naming the resource, the sort, the canonical filter and the first
// row of the next page. Opaque to clients; anything that does not decode to exactly this shape
// is InvalidArgument.
import { invalidArgument } from "../../errors.js";
import type { SortOrder } from "./types.js";

export interface PageTokenContent {
  resource: string;
  sort: SortOrder;
  /** Canonical filter text ("" for none), see canonicalFilter. */
  filter: string;
  /** First row of the next page (inclusive): its sort value as text (null for NULL) and id. */
  after: { value: string | null; id: string };
}

const version = 1;

export function encodePageToken(token: PageTokenContent): string {
  const body = {
    v: version,
    resource: token.resource,
    sort: { field: token.sort.field, desc: token.sort.desc },
    filter: token.filter,
    after: { value: token.after.value, id: token.after.id },
  };
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

const base64Text = /^[A-Za-z0-9+/_-]+={0,2}$/;
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes a token (base64url or standard base64); InvalidArgument when it is not one of ours. */
export function decodePageToken(token: string): PageTokenContent {
  const text = token.trim();
  if (!base64Text.test(text)) throw badToken("not base64");
  let body: unknown;
  try {
    body = JSON.parse(utf8.decode(Buffer.from(text.replace(/=+$/, ""), "base64url")));
  } catch {
    throw badToken("not JSON");
  }
  if (!isObject(body) || body.v !== version) throw badToken("unknown format");
  const { resource, sort, filter, after } = body;
  if (
    typeof resource !== "string" ||
    typeof filter !== "string" ||
    !isObject(sort) ||
    typeof sort.field !== "string" ||
    typeof sort.desc !== "boolean" ||
    !isObject(after) ||
    typeof after.id !== "string" ||
    !(typeof after.value === "string" || after.value === null)
  ) {
    throw badToken("unknown format");
  }
  return { resource, sort: { field: sort.field, desc: sort.desc }, filter, after: { value: after.value, id: after.id } };
}

export function badToken(reason: string): Error {
  return invalidArgument(`invalid page token: ${reason}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
