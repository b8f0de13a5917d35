// A server under test, run in its own process so the load generator does not share its core:
//   tsx bench/target-server.ts pipewright            Pipewright on the embedded defaults
//   tsx bench/target-server.ts bare <json-file>      fastify + grpc-js returning fixed answers
// Prints one JSON line {"http": port, "grpc": port} once listening.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import fastify from "fastify";
import { loadConfig } from "../src/config.js";
import { startPipewright } from "../src/server/pipewright.js";
import { barePath, grpcMethodPath } from "./endpoints.js";


async function pipewright() {
  const dataDir = mkdtempSync(join(tmpdir(), "pipewright-bench-"));
  // The runner stops this process with SIGTERM; leave nothing behind.
  process.once("SIGTERM", () => {
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
  const config = loadConfig(["--port", "0", "--grpc-port", "0", "--log-level", "warn"], { DATA_DIR: dataDir });
  const server = await startPipewright(config);
  return { http: Number(new URL(server.httpUrl).port), grpc: Number(server.grpcAddress.split(":").pop()) };
}

/** The same answers as Pipewright's, with none of its work: the baseline. */
async function bare(answersFile: string) {
  const answers = JSON.parse(readFileSync(answersFile, "utf8")) as { json: string; grpcBase64: string };
  const app = fastify();
  app.get(barePath, (_req, reply) => reply.type("application/json").send(answers.json));
  await app.listen({ host: "127.0.0.1", port: 0 });

  const bytes = Buffer.from(answers.grpcBase64, "base64");
  const identity = (b: Buffer) => b;
  const server = new grpc.Server();
  server.addService(
    {
      GetArtifactType: {
        path: grpcMethodPath,
        requestStream: false,
        responseStream: false,
        requestSerialize: identity,
        requestDeserialize: identity,
        responseSerialize: identity,
        responseDeserialize: identity,
      },
    },
    { GetArtifactType: (_call: unknown, callback: grpc.sendUnaryData<Buffer>) => callback(null, bytes) },
  );
  const grpcPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  );
  return { http: (app.server.address() as { port: number }).port, grpc: grpcPort };
}

const [kind, arg] = process.argv.slice(2);
const ports = kind === "pipewright" ? await pipewright() : await bare(arg);
console.log(JSON.stringify(ports));
