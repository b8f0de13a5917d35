// What makes a type definition valid, and how definitions compare and evolve (add-only).
import { toJson } from "@bufbuild/protobuf";
import {
  ArtifactStructTypeSchema,
  PropertyType,
  type ArtifactStructType,
} from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import { invalidArgument } from "../../errors.js";
import type { NewType, StoredType } from "../../store/metadata/type-store.js";

export function validateTypeDefinition(type: NewType): void {
  if (type.name === "") throw invalidArgument("type name is required");
  for (const [property, propertyType] of Object.entries(type.properties)) {
    if (!(propertyType in PropertyType) || propertyType === PropertyType.UNKNOWN) {
      throw invalidArgument(`property "${property}" of type "${type.name}" must be INT, DOUBLE or STRING`);
    }
  }
}

/** Stable text of a struct type, for equality (map keys sorted). */
function canonicalStruct(type: ArtifactStructType | undefined): string {
  if (!type) return "";
  return JSON.stringify(toJson(ArtifactStructTypeSchema, type), (_key, value: unknown) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}

const sameProperties = (a: StoredType["properties"], b: StoredType["properties"]) =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, type]) => b[key] === type);

export function sameDefinition(stored: StoredType, requested: NewType): boolean {
  return (
    sameProperties(stored.properties, requested.properties) &&
    canonicalStruct(stored.inputType) === canonicalStruct(requested.inputType) &&
    canonicalStruct(stored.outputType) === canonicalStruct(requested.outputType)
  );
}

/**
 * The stored type evolved by a request: properties may only be added; struct types given in
 * the request replace the stored ones.
 */
export function evolvedDefinition(stored: StoredType, requested: NewType): NewType {
  for (const [property, type] of Object.entries(stored.properties)) {
    if (!(property in requested.properties)) {
      throw invalidArgument(`property "${property}" of type "${stored.name}" cannot be removed`);
    }
    if (requested.properties[property] !== type) {
      throw invalidArgument(
        `property "${property}" of type "${stored.name}" cannot change from ${PropertyType[type]} to ${PropertyType[requested.properties[property]]}`,
      );
    }
  }
  return {
    name: stored.name,
    properties: requested.properties,
    inputType: requested.inputType ?? stored.inputType,
    outputType: requested.outputType ?? stored.outputType,
  };
}
