// A test-only service whose request has the field types the real requests lack (repeated
// scalars, int64, bool, bytes, double, enums, a nested message), described at runtime.
import { create, createFileRegistry, setExtension, type DescMessage, type DescService, type MessageInitShape } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { http } from "../../gen/proto/google/api/annotations_pb.js";
import { HttpRuleSchema } from "../../gen/proto/google/api/http_pb.js";

// protoc fills in json_name; a hand-made descriptor must too.
const field = (label: Label) => (name: string, number: number, type: Type, typeName?: string) => ({
  name,
  jsonName: name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()),
  number,
  type,
  typeName,
  label,
});
const optional = field(Label.OPTIONAL);
const repeated = field(Label.REPEATED);

/** MethodOptions carrying a google.api.http rule. */
export function methodOptions(init: MessageInitShape<typeof HttpRuleSchema>) {
  const options = create(MethodOptionsSchema);
  setExtension(options, http, create(HttpRuleSchema, init));
  return options;
}

const file = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: "things.proto",
    package: "test",
    syntax: "proto3",
    enumType: [{ name: "Kind", value: [{ name: "KIND_UNSPECIFIED", number: 0 }, { name: "SMALL", number: 1 }, { name: "LARGE", number: 2 }] }],
    messageType: [
      { name: "Inner", field: [optional("name", 1, Type.STRING), optional("size", 2, Type.INT64)] },
      {
        name: "Thing",
        field: [
          optional("id", 1, Type.STRING),
          optional("count", 2, Type.INT64),
          optional("flag", 3, Type.BOOL),
          optional("kind", 4, Type.ENUM, ".test.Kind"),
          repeated("tags", 5, Type.STRING),
          repeated("nums", 6, Type.INT64),
          repeated("kinds", 7, Type.ENUM, ".test.Kind"),
          optional("inner", 8, Type.MESSAGE, ".test.Inner"),
          optional("blob", 9, Type.BYTES),
          optional("ratio", 10, Type.DOUBLE),
          optional("small_count", 11, Type.UINT32),
        ],
      },
      { name: "Echo", field: [optional("thing", 1, Type.MESSAGE, ".test.Thing"), repeated("others", 2, Type.MESSAGE, ".test.Thing")] },
    ],
    service: [
      {
        name: "Things",
        method: [
          { name: "Get", inputType: ".test.Thing", outputType: ".test.Echo", options: methodOptions({ pattern: { case: "get", value: "/v1/things/{id}" } }) },
          {
            name: "Peek",
            inputType: ".test.Thing",
            outputType: ".test.Echo",
            options: methodOptions({ pattern: { case: "get", value: "/v1/things/{id}/inner/{inner.name}/{inner.size}:peek" } }),
          },
          {
            name: "Update",
            inputType: ".test.Thing",
            outputType: ".test.Echo",
            options: methodOptions({ pattern: { case: "patch", value: "/v1/things/{id}" }, body: "inner" }),
          },
          {
            name: "Find",
            inputType: ".test.Thing",
            outputType: ".test.Echo",
            options: methodOptions({ pattern: { case: "custom", value: { kind: "SEARCH", path: "/v1/things/{id}" } } }),
          },
          {
            name: "Label",
            inputType: ".test.Thing",
            outputType: ".test.Echo",
            options: methodOptions({ pattern: { case: "post", value: "/v1/things/{id}:label" }, body: "tags" }),
          },
        ],
      },
    ],
  }),
  () => undefined,
);

export const ThingsService = file.getService("test.Things") as DescService;
export const EchoSchema = file.getMessage("test.Echo") as DescMessage;
