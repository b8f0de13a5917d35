// The real entry point: `src/main.ts` as a child process, as `npm start` runs it.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = new URL("../..", import.meta.url).pathname;
const tsx = join(repo, "node_modules/.bin/tsx");

function startMain(env: Record<string, string>, args: string[] = []): ChildProcess {
  return spawn(tsx, ["src/main.ts", ...args], { cwd: repo, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
}

/** Resolves with the ports from the "pipewright ready" log line. */
function readyPorts(child: ChildProcess): Promise<{ http: number; grpc: number }> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      const entry = JSON.parse(line) as { msg?: string; http?: number; grpc?: number };
      if (entry.msg === "pipewright ready") resolve({ http: entry.http!, grpc: entry.grpc! });
    });
    child.once("exit", (code) => reject(new Error(`exited early with ${code}`)));
  });
}

const exitCode = (child: ChildProcess) => new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));

describe("the server process", () => {
  let dataDir: string;
  let child: ChildProcess;
  let ports: { http: number; grpc: number };
  const stderr: string[] = [];

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "pipewright-main-"));
    child = startMain({ DATA_DIR: dataDir, PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "info" });
    child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
    ports = await readyPorts(child);
  });
  afterAll(() => {
    child.kill("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("is healthy on HTTP and on gRPC health checking", async () => {
    const res = await fetch(`http://127.0.0.1:${ports.http}/healthz`);
    expect(res.status).toBe(200);
    const health = loadSync("health/v1/health.proto", {
      includeDirs: [join(repo, "node_modules/grpc-health-check/proto")],
      enums: String,
    });
    const Health = (grpc.loadPackageDefinition(health).grpc as any).health.v1.Health; // eslint-disable-line @typescript-eslint/no-explicit-any
    const client = new Health(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
    const status = await new Promise<{ status: string }>((resolve, reject) =>
      client.Check({ service: "" }, (err: Error | null, r: { status: string }) => (err ? reject(err) : resolve(r))),
    );
    client.close();
    expect(status.status).toBe("SERVING");
  });

  it("lists its services through gRPC server reflection", async () => {
    const reflection = loadSync("grpc/reflection/v1/reflection.proto", {
      includeDirs: [join(repo, "node_modules/@grpc/reflection/build/proto")],
      keepCase: true,
    });
    const Reflection = (grpc.loadPackageDefinition(reflection).grpc as any).reflection.v1.ServerReflection; // eslint-disable-line @typescript-eslint/no-explicit-any
    const client = new Reflection(`127.0.0.1:${ports.grpc}`, grpc.credentials.createInsecure());
    const call = client.ServerReflectionInfo();
    call.on("error", () => {}); // ending the stream early cancels it; that is expected here
    const answer = new Promise<{ list_services_response: { service: { name: string }[] } }>((resolve) => call.once("data", resolve));
    call.write({ list_services: "*" });
    const names = (await answer).list_services_response.service.map((s) => s.name);
    call.end();
    client.close();
    expect(names.sort()).toEqual([
      "api.ExperimentService",
      "api.JobService",
      "api.MetadataService",
      "api.PipelineService",
      "api.PipelineUploadService",
      "api.RunService",
    ]);
  });

  it("logs one JSON line per request", async () => {
    const lines: string[] = [];
    const reader = createInterface({ input: child.stdout! });
    reader.on("line", (l) => lines.push(l));
    await fetch(`http://127.0.0.1:${ports.http}/api/v1alpha1/artifact_types`);
    await new Promise((r) => setTimeout(r, 200));
    reader.close();
    const requests = lines.map((l) => JSON.parse(l)).filter((e) => e.url === "/api/v1alpha1/artifact_types");
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ level: 30, method: "GET", status: 200 });
  });

  it("finishes in-flight work and exits 0 on SIGTERM", async () => {
    const exited = exitCode(child);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(stderr.join("")).toBe("");
  });

  it.each([
    [{ PORT: "http" }, /PORT/],
    [{ LOG_LEVEL: "loud" }, /LOG_LEVEL/],
    [{ DATABASE_URL: "mysql://x" }, /DATABASE_URL/],
  ])("exits 2 with one clear line for invalid configuration %o", async (env, message) => {
    const bad = startMain({ DATA_DIR: dataDir, ...env });
    let err = "";
    bad.stderr!.on("data", (c: Buffer) => (err += c.toString()));
    expect(await exitCode(bad)).toBe(2);
    expect(err.trim().split("\n")).toHaveLength(1);
    expect(err).toMatch(message);
  });

  it("rejects an unknown flag with exit code 2", async () => {
    const bad = startMain({ DATA_DIR: dataDir }, ["--colour", "blue"]);
    expect(await exitCode(bad)).toBe(2);
  });
});
