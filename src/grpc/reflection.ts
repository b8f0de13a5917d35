// gRPC server reflection (v1 and v1alpha) answered from our exact file descriptors, so that
// `buf curl` and grpcurl can discover and call every service.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { create, createFileRegistry, toBinary, type DescFile, type DescService, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema, FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";

// The request/response messages come from the .proto files that @grpc/reflection ships.
const protoRoot = join(dirname(createRequire(import.meta.url).resolve("@grpc/reflection/package.json")), "build/proto");

interface ReflectionRequest {
  host?: string;
  file_by_filename?: string;
  file_containing_symbol?: string;
  file_containing_extension?: { containing_type: string; extension_number: number };
  all_extension_numbers_of_type?: string;
  list_services?: string;
}

/** Files in import order: every file after the files it imports. */
function inImportOrder(roots: readonly DescFile[]): DescFile[] {
  const ordered = new Map<string, DescFile>();
  const visit = (f: DescFile) => {
    if (ordered.has(f.name)) return;
    f.dependencies.forEach(visit);
    ordered.set(f.name, f);
  };
  roots.forEach(visit);
  return [...ordered.values()];
}

// The requested file first, then everything it imports, as reflection clients expect.
const withDependencies = (file: DescFile) =>
  inImportOrder([file])
    .reverse()
    .map((f) => toBinary(FileDescriptorProtoSchema, f.proto));

function answer(services: readonly DescService[], registry: FileRegistry, request: ReflectionRequest): object {
  const files = (file: DescFile | undefined, what: string) =>
    file
      ? { file_descriptor_response: { file_descriptor_proto: withDependencies(file) } }
      : { error_response: { error_code: grpc.status.NOT_FOUND, error_message: `${what} not found` } };
  const extensionsOf = (typeName: string) => [...registry].filter((d) => d.kind === "extension" && d.extendee.typeName === typeName);

  if (request.list_services !== undefined) {
    return { list_services_response: { service: services.map((s) => ({ name: s.typeName })) } };
  }
  if (request.file_by_filename !== undefined) {
    return files(registry.getFile(request.file_by_filename), `file ${request.file_by_filename}`);
  }
  if (request.file_containing_symbol !== undefined) {
    const symbol = request.file_containing_symbol;
    // A method is named `<service>.<method>`; its file is the service's.
    const desc = registry.get(symbol) ?? registry.get(symbol.slice(0, symbol.lastIndexOf(".")));
    return files(desc?.file, `symbol ${symbol}`);
  }
  if (request.file_containing_extension !== undefined) {
    const { containing_type, extension_number } = request.file_containing_extension;
    const ext = extensionsOf(containing_type).find((d) => d.kind === "extension" && d.number === extension_number);
    return files(ext?.file, `extension ${extension_number} of ${containing_type}`);
  }
  if (request.all_extension_numbers_of_type !== undefined) {
    const type = request.all_extension_numbers_of_type;
    const numbers = extensionsOf(type).map((d) => (d.kind === "extension" ? d.number : 0));
    return { all_extension_numbers_response: { base_type_name: type, extension_number: numbers } };
  }
  return { error_response: { error_code: grpc.status.INVALID_ARGUMENT, error_message: "empty reflection request" } };
}

export function addReflection(server: grpc.Server, services: readonly DescService[]): void {
  const files = inImportOrder(services.map((s) => s.file));
  const registry = createFileRegistry(create(FileDescriptorSetSchema, { file: files.map((f) => f.proto) }));
  for (const version of ["v1", "v1alpha"]) {
    const definition = loadSync(`grpc/reflection/${version}/reflection.proto`, { includeDirs: [protoRoot], keepCase: true });
    const service = (grpc.loadPackageDefinition(definition).grpc as grpc.GrpcObject).reflection as grpc.GrpcObject;
    const ctor = (service[version] as grpc.GrpcObject).ServerReflection as grpc.ServiceClientConstructor;
    server.addService(ctor.service, {
      ServerReflectionInfo: (call: grpc.ServerDuplexStream<ReflectionRequest, object>) => {
        call.on("data", (request: ReflectionRequest) =>
          call.write({ valid_host: request.host ?? "", original_request: request, ...answer(services, registry, request) }),
        );
        call.on("end", () => call.end());
      },
    });
  }
}
