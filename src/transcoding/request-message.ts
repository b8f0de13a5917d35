// Builds an RPC's input message from an HTTP request: the JSON body first, then query
// parameters for the fields neither path nor body binds, then the path variables.
//
// Strings from the path and the query are converted by wrapping them in a JSON fragment and
// merging it with mergeFromJson, so they follow the proto3 JSON rules (int64 as decimal
// string, enum by name or number, bytes as base64) and get the same validation as a body.
import {
  create,
  mergeFromJson,
  ScalarType,
  type DescField,
  type DescMessage,
  type JsonValue,
  type Message,
  type Registry,
} from "@bufbuild/protobuf";
import { invalidArgument } from "../errors.js";
import { hasFieldObjectJson, isSingularScalar, resolveFieldPath } from "./fields.js";
import type { Route } from "./route-table.js";

export interface HttpRequestParts {
  /** Captured path variables, keyed by field path. */
  pathParams: Record<string, string>;
  query: URLSearchParams;
  /** The raw request body, if any. */
  body: Buffer | undefined;
}

/** Throws an InvalidArgument ConnectError for anything the client got wrong. */
export function buildRequestMessage(route: Route, request: HttpRequestParts, registry?: Registry): Message {
  const schema = route.method.input;
  const message = create(schema);
  if (route.body !== "" && request.body && request.body.length > 0) {
    mergeBody(route, message, request.body, registry);
  }
  // With body "*" every field comes from the body.
  if (route.body !== "*") {
    for (const [key, values] of groupQuery(request.query)) {
      const fields = resolveFieldPath(schema, key);
      if (!fields || isBound(route, fields)) continue; // unknown keys are ignored
      mergeStrings(schema, message, fields, values, `query parameter "${key}"`);
    }
  }
  for (const [fieldPath, value] of Object.entries(request.pathParams)) {
    // Resolvable: the route table checked every path variable at compile time.
    const fields = resolveFieldPath(schema, fieldPath) as DescField[];
    mergeStrings(schema, message, fields, [value], `path parameter "${fieldPath}"`);
  }
  return message;
}

function mergeBody(route: Route, message: Message, body: Buffer, registry: Registry | undefined): void {
  let json: JsonValue;
  try {
    json = JSON.parse(body.toString("utf8")) as JsonValue;
  } catch (err) {
    throw invalidArgument(`request body is not valid JSON: ${(err as Error).message}`);
  }
  const field = route.bodyField;
  const target = field === undefined ? route.method.input : field.fieldKind === "message" ? field.message : undefined;
  // fromJson would reject most non-objects itself, but it reads null as "unset".
  if (target && hasFieldObjectJson(target) && (json === null || typeof json !== "object" || Array.isArray(json))) {
    throw invalidArgument("request body must be a JSON object");
  }
  try {
    mergeFromJson(route.method.input, message, field ? { [field.name]: json } : json, {
      ignoreUnknownFields: true,
      registry,
    });
  } catch (err) {
    throw invalidArgument(`invalid request body: ${(err as Error).message}`);
  }
}

/** Merges string values into the field at the end of `fields`. */
function mergeStrings(
  schema: DescMessage,
  message: Message,
  fields: readonly DescField[],
  values: readonly string[],
  what: string,
): void {
  const leaf = fields[fields.length - 1];
  let json: JsonValue;
  if (isSingularScalar(leaf)) json = stringToJson(leaf, values[0]); // the first of repeated keys wins
  else if (leaf.fieldKind === "list" && leaf.listKind !== "message") json = values.map((v) => stringToJson(leaf, v));
  else throw invalidArgument(`${what} names a field that cannot be set from a string`);
  for (let i = fields.length - 1; i >= 0; i--) json = { [fields[i].name]: json };
  try {
    mergeFromJson(schema, message, json);
  } catch (err) {
    throw invalidArgument(`invalid ${what}: ${(err as Error).message}`);
  }
}

// Go's strconv.ParseBool spellings, which the original gateway accepted.
const TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);
const FALSE = new Set(["0", "f", "F", "FALSE", "false", "False"]);

/** The JSON value for one string; values that do not convert are passed on for mergeFromJson to reject. */
function stringToJson(field: DescField, value: string): JsonValue {
  if (field.enum && /^-?\d+$/.test(value)) return Number(value);
  if (field.scalar === ScalarType.BOOL) return TRUE.has(value) ? true : FALSE.has(value) ? false : value;
  return value;
}

function groupQuery(query: URLSearchParams): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const [key, value] of query) {
    const values = grouped.get(key);
    if (values) values.push(value);
    else grouped.set(key, [value]);
  }
  return grouped;
}

/** Whether the path or the body binds these fields or a message containing them. */
function isBound(route: Route, fields: readonly DescField[]): boolean {
  let path = "";
  for (const field of fields) {
    path = path ? `${path}.${field.name}` : field.name;
    if (route.boundFields.has(path)) return true;
  }
  return false;
}
