// The JSON body of a successful REST response.
import { toJson, type DescMessage, type JsonObject, type JsonValue, type Message, type Registry } from "@bufbuild/protobuf";
import { hasFieldObjectJson } from "./fields.js";

/**
 * Proto field names, int64 as strings, enums by name, and, unlike plain proto3 JSON, every
 * top-level repeated or map field present even when empty: clients of the original servers
 * index into list fields without checking for them.
 */
export function responseJson(schema: DescMessage, message: Message, registry?: Registry): JsonValue {
  const json = toJson(schema, message, { useProtoFieldName: true, registry });
  if (!hasFieldObjectJson(schema)) return json;
  const object = json as JsonObject;
  for (const field of schema.fields) {
    if (field.fieldKind === "list") object[field.name] ??= [];
    else if (field.fieldKind === "map") object[field.name] ??= {};
  }
  return object;
}
