// Native gRPC (HTTP/2) through @grpc/grpc-js, generic over the service descriptors: every unary
// method becomes a grpc-js handler that feeds the shared call pipeline.
import * as grpc from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { fromBinary, toBinary, type DescMethod, type Message } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import type { CallPipeline } from "../server/call-pipeline.js";
import { addReflection } from "./reflection.js";

function headersOf(metadata: grpc.Metadata): Headers {
  const headers = new Headers();
  for (const [key, value] of Object.entries(metadata.getMap())) {
    if (typeof value === "string") headers.append(key, value);
  }
  return headers;
}

/** The status, message and google.rpc.Status details trailer for a failed call. */
function grpcErrorOf(err: ConnectError): Partial<grpc.StatusObject> {
  const trailer = setTrailerStatus(new Headers(), err);
  const metadata = new grpc.Metadata();
  const details = trailer.get("grpc-status-details-bin");
  if (details) metadata.set("grpc-status-details-bin", Buffer.from(details, "base64"));
  return { code: err.code as number as grpc.status, details: err.rawMessage, metadata };
}

function definitionOf(method: DescMethod): grpc.MethodDefinition<Message, Message> {
  return {
    path: `/${method.parent.typeName}/${method.name}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: (m) => Buffer.from(toBinary(method.input, m)),
    requestDeserialize: (bytes) => fromBinary(method.input, bytes),
    responseSerialize: (m) => Buffer.from(toBinary(method.output, m)),
    responseDeserialize: (bytes) => fromBinary(method.output, bytes),
  };
}

export function createGrpcServer(pipeline: CallPipeline): grpc.Server {
  const server = new grpc.Server();
  for (const service of pipeline.services) {
    const definition: Record<string, grpc.MethodDefinition<Message, Message>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const method of service.methods) {
      if (method.methodKind !== "unary") continue;
      definition[method.name] = definitionOf(method);
      handlers[method.name] = ((call: grpc.ServerUnaryCall<Message, Message>, callback: grpc.sendUnaryData<Message>) => {
        const abort = new AbortController();
        call.once("cancelled", () => abort.abort());
        pipeline
          .call(method, call.request, {
            protocolName: "grpc",
            requestMethod: "POST",
            url: definition[method.name].path,
            headers: headersOf(call.metadata),
            signal: abort.signal,
          })
          .then(
            (response) => callback(null, response),
            (err: ConnectError) => callback(grpcErrorOf(err)),
          );
      }) as grpc.handleUnaryCall<Message, Message>;
    }
    server.addService(definition, handlers);
  }
  const serving = Object.fromEntries([["", "SERVING"], ...pipeline.services.map((s) => [s.typeName, "SERVING"])]);
  new HealthImplementation(serving).addToServer(server);
  addReflection(server, pipeline.services);
  return server;
}

export function listenGrpc(server: grpc.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (err, boundPort) =>
      err ? reject(err) : resolve(boundPort),
    );
  });
}

/** Lets in-flight calls finish, then stops; forces the stop after `graceMs`. */
export function shutdownGrpc(server: grpc.Server, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const force = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(force);
      resolve();
    });
  });
}
