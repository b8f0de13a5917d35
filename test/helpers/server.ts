// Boots a real Pipewright (both ports on 0) against a fresh SQLite file or PostgreSQL database
// and hands back clients for every transport.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { DescService } from "@bufbuild/protobuf";
import { createClient, type Client, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { MetadataService } from "../../gen/proto/metadata/service_pb.js";
import { loadConfig } from "../../src/config.js";
import { startPipewright, type RunningServer } from "../../src/server/pipewright.js";
import { freshPostgresDatabase, type DatabaseKind } from "./postgres.js";

export type ConnectTransportKind = "connect-json" | "connect-binary" | "grpc-web";

export { databases, type DatabaseKind } from "./postgres.js";

export interface RestResponse {
  status: number;
  headers: Headers;
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- JSON under test
  text: string;
}

export interface TestServer {
  server: RunningServer;
  dataDir: string;
  databaseUrl: string;
  rest(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<RestResponse>;
  /** A client built by @grpc/proto-loader from our .proto files, as third parties would. */
  grpc(service?: string): grpc.Client & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  connect(transport?: ConnectTransportKind): Client<typeof MetadataService>;
  /** A Connect-generated client of any of our services. */
  client<S extends DescService>(service: S, transport?: ConnectTransportKind): Client<S>;
  close(): Promise<void>;
}

const protoPackages = loadSync(
  [
    "metadata/service.proto",
    "kfp/experiment.proto",
    "kfp/pipeline.proto",
    "kfp/pipeline_upload.proto",
    "kfp/run.proto",
    "kfp/job.proto",
  ],
  {
  includeDirs: [new URL("../../proto", import.meta.url).pathname],
  keepCase: true,
  longs: String,
  enums: String,
  oneofs: true,
  },
);
const grpcPackages = grpc.loadPackageDefinition(protoPackages);

export async function startTestServer(
  options: { database?: DatabaseKind; authTokens?: string[]; databaseUrl?: string } = {},
): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "pipewright-test-"));
  const databaseUrl =
    options.databaseUrl ??
    (options.database === "postgresql" ? await freshPostgresDatabase() : `file:${join(dataDir, "test.db")}`);
  const config = loadConfig(["--port", "0", "--grpc-port", "0", "--log-level", "warn"], {
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    AUTH_TOKENS: (options.authTokens ?? []).join(","),
  });
  const server = await startPipewright(config);
  const grpcClients: grpc.Client[] = [];

  const transports = {
    "connect-json": () => createConnectTransport({ baseUrl: server.httpUrl, httpVersion: "1.1", useBinaryFormat: false }),
    "connect-binary": () => createConnectTransport({ baseUrl: server.httpUrl, httpVersion: "1.1", useBinaryFormat: true }),
    "grpc-web": () => createGrpcWebTransport({ baseUrl: server.httpUrl, httpVersion: "1.1" }),
  } satisfies Record<string, () => Transport>;

  return {
    server,
    dataDir,
    databaseUrl,
    async rest(method, path, body, headers = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      if (body !== undefined) {
        init.body = typeof body === "string" ? body : JSON.stringify(body);
        (init.headers as Record<string, string>)["content-type"] ??= "application/json";
      }
      const response = await fetch(server.httpUrl + path, init);
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, body: parsed, text };
    },
    grpc(service = "api.MetadataService") {
      const [pkg, name] = service.split(".");
      const Ctor = (grpcPackages[pkg] as grpc.GrpcObject)[name] as grpc.ServiceClientConstructor;
      const client = new Ctor(server.grpcAddress, grpc.credentials.createInsecure());
      grpcClients.push(client);
      return client as grpc.Client & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    },
    connect(transport = "connect-json") {
      return createClient(MetadataService, transports[transport]());
    },
    client(service, transport = "connect-json") {
      return createClient(service, transports[transport]());
    },
    async close() {
      grpcClients.forEach((c) => c.close());
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Promisified unary call on a proto-loader client; rejects with the grpc-js ServiceError. */
export function grpcCall<T = any>( // eslint-disable-line @typescript-eslint/no-explicit-any
  client: grpc.Client & Record<string, any>, // eslint-disable-line @typescript-eslint/no-explicit-any
  method: string,
  request: object,
  metadata = new grpc.Metadata(),
): Promise<T> {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, (err: grpc.ServiceError | null, response: T) => (err ? reject(err) : resolve(response)));
  });
}
