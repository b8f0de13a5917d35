// Field lookups shared by route compilation and request decoding.
import type { DescField, DescMessage } from "@bufbuild/protobuf";

/**
 * Resolves a dotted field path, each name given as proto name or lowerCamelCase JSON name.
 * Undefined when a name is unknown or a non-last name is not a singular message field.
 */
export function resolveFieldPath(schema: DescMessage, path: string): DescField[] | undefined {
  const fields: DescField[] = [];
  let message: DescMessage | undefined = schema;
  for (const name of path.split(".")) {
    const field: DescField | undefined = message?.fields.find((f) => f.name === name || f.jsonName === name);
    if (!field) return undefined;
    fields.push(field);
    message = field.fieldKind === "message" ? field.message : undefined;
  }
  return fields;
}

/** Whether a field holds a single value that can be written as one string (path or query). */
export function isSingularScalar(field: DescField): boolean {
  return field.fieldKind === "scalar" || field.fieldKind === "enum";
}

/**
 * Whether a message's JSON form is an object of its fields. Well-known types such as
 * Timestamp or Value have their own JSON forms.
 */
export function hasFieldObjectJson(schema: DescMessage): boolean {
  return !schema.typeName.startsWith("google.protobuf.");
}
