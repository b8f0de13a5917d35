// `npm run bench`: Pipewright against baselines measured in the same run, reported as ratios.
//  (a) GetArtifactType over REST vs a bare fastify route returning the same JSON
//  (b) the same RPC over native gRPC vs a bare grpc-js server returning the same bytes
//  (c) the same RPC over Connect JSON (HTTP/1.1), for reference against (a)'s baseline
//  (d) CreateArtifact on SQLite vs raw better-sqlite3 inserts of the same rows
//  (e) ListRuns (50 of one experiment, created_at desc) at 100,000 runs vs at 1,000; CreateRun rate
//  (f) a fan-out/fan-in DAG of 102 trivial steps on the local engine vs spawning the same 102
//      processes directly, both at the machine's core count at a time (engine-overhead.ts)
//  (g) 1,000 jobs on a 1-second period on SQLite for BENCH_SCHEDULER_SECONDS (30) s: firing
//      lateness against the period, and the scheduler's CPU share (scheduler-lateness.ts)
// BENCH_ONLY=f,g (any of a–g, comma-separated) runs only those sections; all by default.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { createArtifactsPerSecond } from "./create-artifacts.js";
import { engineOverhead, perStep } from "./engine-overhead.js";
import { listRunsLatency } from "./list-runs.js";
import { grpcLoad, httpLoad, type LoadResult } from "./load.js";
import { barePath, grpcMethodPath } from "./endpoints.js";
import { schedulerLateness } from "./scheduler-lateness.js";

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const only = new Set(
  (process.env.BENCH_ONLY ?? "a,b,c,d,e,f,g")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean),
);
for (const section of only) if (!"abcdefg".includes(section) || section.length !== 1) throw new Error(`BENCH_ONLY: no section ${section} (a–g)`);
const wants = (section: string) => only.has(section);
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
  const results: Record<string, LoadResult> = {};
  if (wants("a") || wants("b") || wants("c")) await transportSections(results);

  const creates = wants("d") ? await createArtifactsPerSecond(Number(process.env.BENCH_CREATES ?? 3000)) : undefined;
  const listRuns = wants("e") ? await listRunsLatency() : undefined;
  const load = loadavg()[0];
  const engine = wants("f") ? await engineOverhead() : undefined;
  const scheduler = wants("g") ? await schedulerLateness() : undefined;

  if (Object.keys(results).length > 0) {
    console.table(
      Object.entries(results).map(([what, r]) => ({
        what,
        "req/s": Math.round(r.requestsPerSecond),
        "p50 ms": r.p50Ms,
        errors: r.errors,
      })),
    );
  }
  const rate = (k: string) => results[k].requestsPerSecond;
  const ratio = (a: number, b: number) => (a / b).toFixed(2);
  const ratios: { ratio: string; value: string; target: string }[] = [];
  if (wants("a")) {
    ratios.push({ ratio: "(a) REST / bare fastify", value: ratio(rate("(a) REST GetArtifactType"), rate("bare fastify route")), target: ">= 0.5" });
  }
  if (wants("b")) {
    ratios.push({ ratio: "(b) gRPC / bare grpc-js", value: ratio(rate("(b) gRPC GetArtifactType"), rate("bare grpc-js server")), target: ">= 0.7" });
  }
  if (wants("c")) {
    ratios.push({
      ratio: "(c) Connect JSON / bare fastify",
      value: ratio(rate("(c) Connect JSON GetArtifactType"), rate("bare fastify route")),
      target: "reference",
    });
  }
  if (creates) {
    ratios.push({
      ratio: `(d) CreateArtifact ${Math.round(creates.ours)}/s / raw inserts ${Math.round(creates.raw)}/s`,
      value: ratio(creates.ours, creates.raw),
      target: ">= 0.3",
    });
  }
  if (listRuns) {
    ratios.push(
      {
        ratio: `(e) ListRuns p50 ${listRuns.large.toFixed(2)} ms at 100k / ${listRuns.small.toFixed(2)} ms at 1k`,
        value: ratio(listRuns.large, listRuns.small),
        target: "<= 2 (and <= 10 ms at 100k)",
      },
      { ratio: "(e) CreateRun per second (domain, SQLite)", value: listRuns.createsPerSecond.toFixed(0), target: "reported" },
    );
  }
  if (engine) {
    const ms = (x: number) => Number((x / engine.steps).toFixed(1));
    const tiers = [
      ["spawn (child_process.spawn, baseline)", engine.spawn],
      ["+ namespaces (setpriv + unshare, no mounts)", engine.namespaces],
      ["+ sandbox: runStep (overlayfs view, scratch)", engine.runStep],
      ["+ engine: LocalEngine, no-op listener", engine.engine],
      ["+ recording: domain.runs.create, SQLite", engine.engineDb],
    ] as const;
    console.log(
      `(f) ${engine.steps} steps (\`sh -c 'echo $X'\`), ${engine.concurrency} at a time, ${engine.rounds === 1 ? "1 round" : `median of ${engine.rounds} rounds`}; ` +
        `load average before: ${load.toFixed(2)}`,
    );
    console.table(
      tiers.map(([tier, t]) => ({
        tier,
        "wall ms/step": ms(t.wallMs),
        ...(engine.rounds > 1 && { "wall min–max": `${ms(t.minWallMs ?? t.wallMs)}–${ms(t.maxWallMs ?? t.wallMs)}` }),
        "server CPU ms/step": ms(t.cpuMs),
        "children CPU ms/step": ms(t.childCpuMs),
        "x spawn": ratio(t.wallMs, engine.spawn.wallMs),
      })),
    );
    ratios.push(
      {
        ratio: `(f) engine ${perStep(engine.engineDb).toFixed(1)} ms/step / spawn ${perStep(engine.spawn).toFixed(1)} ms/step`,
        value: ratio(engine.engineDb.wallMs, engine.spawn.wallMs),
        target: "< 2 (issue)",
      },
      {
        ratio: `(f) engine ${perStep(engine.engineDb).toFixed(1)} ms/step / runStep ${perStep(engine.runStep).toFixed(1)} ms/step`,
        value: ratio(engine.engineDb.wallMs, engine.runStep.wallMs),
        target: "reported",
      },
    );
  }
  if (scheduler) {
    const s = scheduler;
    console.log(
      `(g) ${s.jobs} jobs, 1 s period, max_concurrency 10, SQLite, ${(s.windowMs / 1000).toFixed(1)} s on the system clock; ` +
        `${s.runsCreated} runs created of ${s.runsExpected} slots due; ${s.errors} scheduler errors, ${s.duplicates} duplicate slots; ` +
        `${s.passes.count} firing passes, p50 ${s.passes.p50.toFixed(0)} ms, max ${s.passes.max.toFixed(0)} ms; ` +
        `load average at the end: ${s.loadAverage.toFixed(2)}`,
    );
    console.table([
      { lateness: "handed over (onRunCreated) − scheduled_at", "p50 ms": s.handedOver.p50, "p99 ms": s.handedOver.p99, "max ms": s.handedOver.max },
      { lateness: "created_at (pass start) − scheduled_at", "p50 ms": s.claimed.p50, "p99 ms": s.claimed.p99, "max ms": s.claimed.max },
    ]);
    ratios.push(
      { ratio: `(g) lateness p99 ${s.handedOver.p99} ms / 1 s period`, value: ratio(s.handedOver.p99, 1000), target: "< 1" },
      { ratio: "(g) runs created / slots due", value: ratio(s.runsCreated, s.runsExpected), target: "1.00" },
      {
        ratio: `(g) scheduler CPU: share of one core (of ${s.cores} cores: ${((s.cpuOfOneCore / s.cores) * 100).toFixed(1)}%)`,
        value: s.cpuOfOneCore.toFixed(3),
        target: "reported",
      },
    );
  }
  if (ratios.length > 0) console.table(ratios);
  if (Object.values(results).some((r) => r.errors > 0)) throw new Error("some benchmark requests failed");
  if (scheduler && (scheduler.errors > 0 || scheduler.duplicates > 0)) throw new Error("the scheduler logged errors or fired a slot twice");
}

/** (a)–(c): load against a Pipewright server and against bare servers returning the same bytes. */
async function transportSections(results: Record<string, LoadResult>) {
  const dir = mkdtempSync(join(tmpdir(), "pipewright-bench-"));
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
    if (wants("a")) results["(a) REST GetArtifactType"] = await httpLoad(base + restPath, seconds);
    if (wants("b")) {
      results["(b) gRPC GetArtifactType"] = await grpcLoad(`127.0.0.1:${pipewright.grpc}`, grpcMethodPath, grpcRequest, seconds);
    }
    if (wants("c")) {
      results["(c) Connect JSON GetArtifactType"] = await httpLoad(`${base}/api.MetadataService/GetArtifactType`, seconds, {
        method: "POST",
        body: JSON.stringify({ name }),
        headers: { "content-type": "application/json" },
      });
    }
    pipewright.child.kill();

    const answers = join(dir, "answers.json");
    writeFileSync(answers, JSON.stringify({ json, grpcBase64: grpcAnswer.toString("base64") }));
    const bare = await startTarget(["bare", answers]);
    if (wants("a") || wants("c")) results["bare fastify route"] = await httpLoad(`http://127.0.0.1:${bare.http}${barePath}`, seconds);
    if (wants("b")) results["bare grpc-js server"] = await grpcLoad(`127.0.0.1:${bare.grpc}`, grpcMethodPath, grpcRequest, seconds);
    bare.child.kill();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
