// `npm run bench`: Pipewright against baselines measured in the same run, reported as ratios.
//  (a) GetArtifactType over REST vs a bare fastify route returning the same JSON
//  (b) the same RPC over native gRPC vs a bare grpc-js server returning the same bytes
//  (c) the same RPC over Connect JSON (HTTP/1.1), for reference against (a)'s baseline
//  (d) CreateArtifact on SQLite vs raw better-sqlite3 inserts of the same rows
//  (e) ListRuns (50 of one experiment, created_at desc) at 100,000 runs vs at 1,000; CreateRun rate
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createArtifactsPerSecond } from "./create-artifacts.js";
import { listRunsLatency } from "./list-runs.js";
import { grpcLoad, httpLoad, type LoadResult } from "./load.js";
import { barePath, grpcMethodPath } from "./endpoints.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const tsx = new URL("../node_modules/.bin/tsx", import.meta.url).pathname;

async function startTarget(args: string[]): Promise<{ child: ChildProcess; http: number; grpc: number }> {
  const child = spawn(tsx, [new URL("target-server.ts", import.meta.url).pathname, ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`target ${args[0]} exited with ${code}`)));
  });
  return { child, ...(JSON.parse(line) as { http: number; grpc: number }) };
}

// GetArtifactTypeRequest{name: "kubeflow.org/alpha/model"} in protobuf binary: field 1, length-delimited.
const name = "kubeflow.org/alpha/model";
const grpcRequest = Buffer.concat([Buffer.from([0x0a, name.length]), Buffer.from(name)]);
const restPath = `/api/v1alpha1/artifact_types/${encodeURIComponent(name)}`;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "pipewright-bench-"));
  const results: Record<string, LoadResult> = {};
  try {
    const pipewright = await startTarget(["pipewright"]);
    const base = `http://127.0.0.1:${pipewright.http}`;
    const json = await (await fetch(base + restPath)).text();
    const grpcAnswer = await new Promise<Buffer>((resolve, reject) => {
      import("@grpc/grpc-js").then((grpc) => {
        const client = new grpc.Client(`127.0.0.1:${pipewright.grpc}`, grpc.credentials.createInsecure());
        const id = (b: Buffer) => b;
        client.makeUnaryRequest(grpcMethodPath, id, id, grpcRequest, (err, value) => {
          client.close();
          if (err || !value) reject(err ?? new Error("no answer"));
          else resolve(value);
        });
      }, reject);
    });
    results["(a) REST GetArtifactType"] = await httpLoad(base + restPath, seconds);
    results["(b) gRPC GetArtifactType"] = await grpcLoad(`127.0.0.1:${pipewright.grpc}`, grpcMethodPath, grpcRequest, seconds);
    results["(c) Connect JSON GetArtifactType"] = await httpLoad(`${base}/api.MetadataService/GetArtifactType`, seconds, {
      method: "POST",
      body: JSON.stringify({ name }),
      headers: { "content-type": "application/json" },
    });
    pipewright.child.kill();

    const answers = join(dir, "answers.json");
    writeFileSync(answers, JSON.stringify({ json, grpcBase64: grpcAnswer.toString("base64") }));
    const bare = await startTarget(["bare", answers]);
    results["bare fastify route"] = await httpLoad(`http://127.0.0.1:${bare.http}${barePath}`, seconds);
    results["bare grpc-js server"] = await grpcLoad(`127.0.0.1:${bare.grpc}`, grpcMethodPath, grpcRequest, seconds);
    bare.child.kill();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const creates = await createArtifactsPerSecond(Number(process.env.BENCH_CREATES ?? 3000));
  const listRuns = await listRunsLatency();

  const rows = Object.entries(results).map(([what, r]) => ({
    what,
    "req/s": Math.round(r.requestsPerSecond),
    "p50 ms": r.p50Ms,
    errors: r.errors,
  }));
  console.table(rows);
  const rate = (k: string) => results[k].requestsPerSecond;
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  console.table([
    { ratio: "(a) REST / bare fastify", value: ratio(rate("(a) REST GetArtifactType"), rate("bare fastify route")), target: ">= 0.5" },
    { ratio: "(b) gRPC / bare grpc-js", value: ratio(rate("(b) gRPC GetArtifactType"), rate("bare grpc-js server")), target: ">= 0.7" },
    { ratio: "(c) Connect JSON / bare fastify", value: ratio(rate("(c) Connect JSON GetArtifactType"), rate("bare fastify route")), target: "reference" },
    {
      ratio: `(d) CreateArtifact ${Math.round(creates.ours)}/s / raw inserts ${Math.round(creates.raw)}/s`,
      value: ratio(creates.ours, creates.raw),
      target: ">= 0.3",
    },
    {
      ratio: `(e) ListRuns p50 ${listRuns.large.toFixed(2)} ms at 100k / ${listRuns.small.toFixed(2)} ms at 1k`,
      value: ratio(listRuns.large, listRuns.small),
      target: "<= 2 (and <= 10 ms at 100k)",
    },
    { ratio: "(e) CreateRun per second (domain, SQLite)", value: listRuns.createsPerSecond.toFixed(0), target: "reported" },
  ]);
  if (Object.values(results).some((r) => r.errors > 0)) throw new Error("some benchmark requests failed");
}

await main();
