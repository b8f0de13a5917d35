// An OpenAPI 3 document derived from the same descriptors and routes the gateway serves:
// paths from the google.api.http rules, schemas from the messages, proto field names in JSON.
import { ScalarType, type DescEnum, type DescField, type DescMessage } from "@bufbuild/protobuf";
import type { Route } from "./route-table.js";

type Schema = Record<string, unknown>;

const scalarSchemas: Record<ScalarType, Schema> = {
  [ScalarType.DOUBLE]: { type: "number", format: "double" },
  [ScalarType.FLOAT]: { type: "number", format: "float" },
  [ScalarType.INT64]: { type: "string", format: "int64" },
  [ScalarType.UINT64]: { type: "string", format: "uint64" },
  [ScalarType.INT32]: { type: "integer", format: "int32" },
  [ScalarType.FIXED64]: { type: "string", format: "uint64" },
  [ScalarType.FIXED32]: { type: "integer", format: "int64" },
  [ScalarType.BOOL]: { type: "boolean" },
  [ScalarType.STRING]: { type: "string" },
  [ScalarType.BYTES]: { type: "string", format: "byte" },
  [ScalarType.UINT32]: { type: "integer", format: "int64" },
  [ScalarType.SFIXED32]: { type: "integer", format: "int32" },
  [ScalarType.SFIXED64]: { type: "string", format: "int64" },
  [ScalarType.SINT32]: { type: "integer", format: "int32" },
  [ScalarType.SINT64]: { type: "string", format: "int64" },
};

// Well-known types have JSON forms of their own.
const wellKnownSchemas: Record<string, Schema> = {
  "google.protobuf.Timestamp": { type: "string", format: "date-time" },
  "google.protobuf.Empty": { type: "object" },
  "google.protobuf.Any": { type: "object", properties: { "@type": { type: "string" } }, additionalProperties: true },
};

const apiStatusSchema: Schema = {
  type: "object",
  properties: {
    error: { type: "string" },
    message: { type: "string" },
    code: { type: "integer", format: "int32" },
    details: { type: "array", items: wellKnownSchemas["google.protobuf.Any"] },
  },
};

class SchemaCollector {
  readonly schemas: Record<string, Schema> = { apiStatus: apiStatusSchema };

  refTo(message: DescMessage): Schema {
    const known = wellKnownSchemas[message.typeName];
    if (known) return known;
    if (!(message.typeName in this.schemas)) {
      this.schemas[message.typeName] = {}; // placeholder first: messages may refer to themselves
      this.schemas[message.typeName] = {
        type: "object",
        properties: Object.fromEntries(message.fields.map((f) => [f.name, this.fieldSchema(f)])),
      };
    }
    return { $ref: `#/components/schemas/${message.typeName}` };
  }

  private enumSchema(e: DescEnum): Schema {
    return { type: "string", enum: e.values.map((v) => v.name) };
  }

  private singleSchema(field: { scalar?: ScalarType; enum?: DescEnum; message?: DescMessage }): Schema {
    if (field.message) return this.refTo(field.message);
    if (field.enum) return this.enumSchema(field.enum);
    return scalarSchemas[field.scalar ?? ScalarType.STRING];
  }

  fieldSchema(field: DescField): Schema {
    switch (field.fieldKind) {
      case "list":
        return { type: "array", items: this.singleSchema(field) };
      case "map":
        return { type: "object", additionalProperties: this.singleSchema(field) };
      default:
        return this.singleSchema(field);
    }
  }
}

/**
 * An OpenAPI path for a template. Literal segments inside a variable stay literal and each
 * wildcard becomes a parameter, so `/api/{name=artifact_types/**}` is written
 * `/api/artifact_types/{name}`: what a client puts in `{name}` (slashes encoded) is matched by
 * the gateway as before. A variable with several wildcards numbers the later ones.
 */
function openApiPath(route: Route): { path: string; pathParameters: string[] } {
  const parts: string[] = [];
  const pathParameters: string[] = [];
  route.path.segments.forEach((segment, i) => {
    if (segment.kind === "literal") return parts.push(segment.value);
    const variable = route.path.variables.find((v) => v.start <= i && i < v.end);
    const base = variable?.fieldPath ?? "path";
    const name = pathParameters.includes(base) ? `${base}_${pathParameters.length + 1}` : base;
    pathParameters.push(name);
    parts.push(`{${name}}`);
  });
  return { path: "/" + parts.join("/") + (route.path.verb ? `:${route.path.verb}` : ""), pathParameters };
}

/** Scalar fields (top-level and one message level down) that the query string may set. */
function queryFields(route: Route): [string, DescField][] {
  const fields: [string, DescField][] = [];
  for (const field of route.method.input.fields) {
    if (field.fieldKind === "message" && !(field.message.typeName in wellKnownSchemas)) {
      for (const inner of field.message.fields) {
        if (inner.fieldKind === "scalar" || inner.fieldKind === "enum") fields.push([`${field.name}.${inner.name}`, inner]);
      }
    } else if (field.fieldKind !== "map") {
      fields.push([field.name, field]);
    }
  }
  return fields.filter(([name]) => ![...route.boundFields].some((bound) => name === bound || name.startsWith(`${bound}.`)));
}

export function openApiDocument(routes: readonly Route[], info: { title: string; version: string }): object {
  const schemas = new SchemaCollector();
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Map<string, number>();
  for (const route of routes) {
    const { method } = route;
    // Additional bindings get numbered ids, as the original swagger did (ListArtifacts2).
    const seen = (operationIds.get(method.name) ?? 0) + 1;
    operationIds.set(method.name, seen);
    const { path, pathParameters } = openApiPath(route);
    const parameters = [
      ...pathParameters.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })),
      ...(route.body === "*"
        ? []
        : queryFields(route).map(([name, field]) => ({ name, in: "query", required: false, schema: schemas.fieldSchema(field) }))),
    ];
    const bodySchema =
      route.body === "" ? undefined : route.bodyField ? schemas.fieldSchema(route.bodyField) : schemas.refTo(method.input);
    (paths[path] ??= {})[route.httpMethod.toLowerCase()] = {
      operationId: seen === 1 ? method.name : `${method.name}${seen}`,
      tags: [method.parent.name],
      parameters,
      ...(bodySchema && { requestBody: { required: true, content: { "application/json": { schema: bodySchema } } } }),
      responses: {
        "200": { description: "A successful response.", content: { "application/json": { schema: schemas.refTo(method.output) } } },
        default: {
          description: "An error (apiStatus).",
          content: { "application/json": { schema: { $ref: "#/components/schemas/apiStatus" } } },
        },
      },
    };
  }
  return { openapi: "3.0.3", info, paths, components: { schemas: schemas.schemas } };
}
