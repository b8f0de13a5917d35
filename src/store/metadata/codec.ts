// Conversions between ml_metadata messages and the text columns that hold their maps and
// structs. Values are stored as proto JSON, which keeps int64 (as strings) and doubles exact.
import { fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import {
  ArtifactStructTypeSchema,
  Event_PathSchema,
  PropertyType,
  ValueSchema,
  type ArtifactStructType,
  type Event_Path,
  type Value,
} from "../../../gen/proto/ml_metadata/metadata_store_pb.js";

export function encodeValues(values: { [key: string]: Value }): string {
  const json: JsonObject = {};
  for (const [key, value] of Object.entries(values)) json[key] = toJson(ValueSchema, value);
  return JSON.stringify(json);
}

export function decodeValues(text: string): { [key: string]: Value } {
  const values: { [key: string]: Value } = {};
  for (const [key, json] of Object.entries(JSON.parse(text) as JsonObject)) {
    values[key] = fromJson(ValueSchema, json as JsonValue);
  }
  return values;
}

export function encodePropertyTypes(properties: { [key: string]: PropertyType }): string {
  const json: { [key: string]: string } = {};
  for (const [key, type] of Object.entries(properties)) json[key] = PropertyType[type];
  return JSON.stringify(json);
}

export function decodePropertyTypes(text: string): { [key: string]: PropertyType } {
  const properties: { [key: string]: PropertyType } = {};
  for (const [key, name] of Object.entries(JSON.parse(text) as { [key: string]: string })) {
    properties[key] = PropertyType[name as keyof typeof PropertyType];
  }
  return properties;
}

export function encodeStructType(type: ArtifactStructType | undefined): string | null {
  return type ? JSON.stringify(toJson(ArtifactStructTypeSchema, type)) : null;
}

export function decodeStructType(text: string | null): ArtifactStructType | undefined {
  return text === null ? undefined : fromJson(ArtifactStructTypeSchema, JSON.parse(text) as JsonValue);
}

export function encodeEventPath(path: Event_Path | undefined): string | null {
  return path ? JSON.stringify(toJson(Event_PathSchema, path)) : null;
}

export function decodeEventPath(text: string | null): Event_Path | undefined {
  return text === null ? undefined : fromJson(Event_PathSchema, JSON.parse(text) as JsonValue);
}
