// Properties of an artifact or execution must be declared by its type and of the declared kind;
// custom properties are free but must hold a value.
import { PropertyType, type Value } from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import { invalidArgument } from "../../errors.js";
import type { StoredType } from "../../store/metadata/type-store.js";

const valueCaseOf: Record<PropertyType, Value["value"]["case"]> = {
  [PropertyType.UNKNOWN]: undefined,
  [PropertyType.INT]: "intValue",
  [PropertyType.DOUBLE]: "doubleValue",
  [PropertyType.STRING]: "stringValue",
};

export function validateProperties(
  type: StoredType,
  properties: { [key: string]: Value },
  customProperties: { [key: string]: Value },
): void {
  for (const [key, value] of Object.entries(properties)) {
    const declared = type.properties[key];
    if (declared === undefined) {
      throw invalidArgument(`property "${key}" is not declared by type "${type.name}"; use custom_properties for it`);
    }
    if (value.value.case !== valueCaseOf[declared]) {
      throw invalidArgument(`property "${key}" of type "${type.name}" must be a ${PropertyType[declared]} value`);
    }
  }
  for (const [key, value] of Object.entries(customProperties)) {
    if (value.value.case === undefined) {
      throw invalidArgument(`custom property "${key}" has no value: set int_value, double_value or string_value`);
    }
  }
}
