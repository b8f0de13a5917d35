// (f) Engine overhead: a fan-out/fan-in DAG (one fan-out task, 100 parallel trivial steps, one
// fan-in task: 102 steps) run by the local engine, against the same 102 processes spawned
// directly, all at the same concurrency (the machine's cores). Tiers, each adding one layer:
//   spawn      child_process.spawn of the step's command (`sh -c 'echo $X'`), stdout/stderr piped
//   namespaces the sandbox's command line (setpriv + unshare: mount, PID, IPC, UTS namespaces)
//              running a script that only runs the command: no mounts, no scratch directory
//   runStep    the whole step sandbox (scratch directory, overlayfs view, /proc, /sys, /dev,
//              pivot_root, the reports on fd 3), disposed after each step
//   engine     LocalEngine with a listener that drops updates (no storage)
//   engine+DB  domain.runs.create on SQLite: the RunRecorder writes the run's status and
//              runtime workflow, as the server does
// Both engine tiers also archive each step's log as a main-logs artifact (tar.gz in the store).
// Every tier runs in this one process with the domain already open on SQLite, so that all spawn
// from a process of the server's size. Per step = wall time of the 102 / 102. CPU is split into
// this process's (process.cpuUsage, which includes the kernel's fork work) and its children's
// (cutime + cstime of /proc/self/stat: the sandbox's own programs as well as the step's).
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import Sqlite from "better-sqlite3";
import { RunSchema } from "../gen/proto/kfp/run_pb.js";
import { FilesystemArtifactStore } from "../src/artifacts/store.js";
import type { WorkflowUpdate } from "../src/engine/engine.js";
import { LocalEngine } from "../src/engine/local/local-engine.js";
import { runStep, sandboxAvailable } from "../src/engine/local/step-process.js";
import { sandboxCommand, SYSTEM_PATH } from "../src/engine/local/step-sandbox.js";
import { pipelinesDomain, type PipelinesDomain } from "../src/services/pipelines/index.js";
import type { Workflow } from "../src/services/pipelines/workflow.js";
import { openDatabase } from "../src/store/database.js";

const parallelSteps = 100;
const totalSteps = parallelSteps + 2;
const command = ["sh", "-c", "echo $X"];
const stepEnv = { X: "hello" };
const finalPhases = new Set(["Succeeded", "Failed", "Error"]);

export interface Tier {
  /** Wall time of all 102 steps. */
  wallMs: number;
  /** CPU time of this (the server's) process over the same interval, user + system. */
  cpuMs: number;
  /** CPU time of the child processes (and their descendants) that ended in the interval. */
  childCpuMs: number;
  /** Over the rounds (equal to wallMs for one round). */
  minWallMs?: number;
  maxWallMs?: number;
}

export interface EngineOverhead {
  steps: number;
  concurrency: number;
  spawn: Tier;
  namespaces: Tier;
  runStep: Tier;
  engine: Tier;
  engineDb: Tier;
}

export const perStep = (tier: Tier, steps = totalSteps) => tier.wallMs / steps;

function fanOutFanIn(parallel = parallelSteps): Workflow {
  const step = (name: string, dependencies?: string[]) => ({ name, template: "step", ...(dependencies && { dependencies }) });
  const middle = Array.from({ length: parallel }, (_, i) => `step-${i}`);
  return {
    apiVersion: "argoproj.io/v1alpha1",
    kind: "Workflow",
    metadata: { generateName: "fan-" },
    spec: {
      entrypoint: "main",
      templates: [
        {
          name: "main",
          dag: { tasks: [step("fan-out"), ...middle.map((name) => step(name, ["fan-out"])), step("fan-in", middle)] },
        },
        {
          name: "step",
          container: { image: "alpine", command, env: Object.entries(stepEnv).map(([name, value]) => ({ name, value })) },
        },
      ],
    },
  } as Workflow;
}

/** Runs `task(0..count-1)` at most `concurrency` at a time. */
async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

/** cutime + cstime of this process (waited-for children and their waited-for descendants), in ms. */
function childrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" "); // fields[0] is field 3 (state)
  const ticksPerSecond = 100; // USER_HZ on Linux
  return ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSecond;
}

async function timed(what: () => Promise<void>): Promise<Tier> {
  const cpu = process.cpuUsage();
  const children = childrenCpuMs();
  const start = performance.now();
  await what();
  const wallMs = performance.now() - start;
  const used = process.cpuUsage(cpu);
  return { wallMs, cpuMs: (used.user + used.system) / 1000, childCpuMs: childrenCpuMs() - children };
}

/** Spawns `file args`, drains stdout and stderr, resolves on a zero exit. */
function spawnAndWait(file: string, args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.resume();
    child.stderr.resume();
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}`))));
  });
}

/** Runs the workflow on a LocalEngine of its own whose listener drops the updates (no storage). */
async function engineTier(dir: string, concurrency: number, workflow: Workflow): Promise<Tier> {
  let finished: (phase: string) => void = () => {};
  const done = new Promise<string>((resolve) => (finished = resolve));
  const engine = new LocalEngine({
    artifacts: new FilesystemArtifactStore(join(dir, "artifacts")),
    scratchRoot: join(dir, "work"),
    maxConcurrentSteps: concurrency,
    listener: {
      async workflowUpdated(update: WorkflowUpdate) {
        if (finalPhases.has(update.phase)) finished(update.phase);
      },
      async metricsReported() {},
    },
    ledger: { unfinished: async () => [], terminating: async () => [] },
  });
  try {
    return await timed(async () => {
      await engine.submit(randomUUID(), { ...workflow, metadata: { name: `fan-${randomUUID().slice(0, 8)}` } });
      const phase = await done;
      if (phase !== "Succeeded") throw new Error(`the engine run ended ${phase}`);
    });
  } finally {
    await engine.close();
  }
}

interface DomainOnSqlite {
  domain: PipelinesDomain;
  /** The run's status and finished_at, read on a connection of its own (cheaper than Prisma). */
  statusOf(id: string): { status: string; finished_at: number | null } | undefined;
  close(): Promise<void>;
}

async function openDomain(dir: string, concurrency: number): Promise<DomainOnSqlite> {
  const file = join(dir, "engine.db");
  const db = await openDatabase(`file:${file}`);
  const domain = pipelinesDomain(db, new FilesystemArtifactStore(join(dir, "artifacts")), {
    scratchRoot: join(dir, "work"),
    maxConcurrentSteps: concurrency,
  });
  await domain.experiments.defaultId();
  const reader = new Sqlite(file, { readonly: true, fileMustExist: true });
  const query = reader.prepare("SELECT status, finished_at FROM run WHERE id = ?");
  return {
    domain,
    statusOf: (id) => query.get(id) as { status: string; finished_at: number | null } | undefined,
    async close() {
      reader.close();
      await domain.engine.close();
      await db.close();
    },
  };
}

/** The workflow as the server runs it: CreateRun through the domain, the RunRecorder writing to SQLite. */
async function engineDbTier(target: DomainOnSqlite, workflow: Workflow): Promise<Tier> {
  const { domain } = target;
  const run = create(RunSchema, { name: "fan-out fan-in", pipelineSpec: { workflowManifest: JSON.stringify(workflow) } });
  return timed(async () => {
    const row = await domain.runs.create(await domain.runs.prepare(run));
    for (;;) {
      const stored = target.statusOf(row.id);
      if (stored && finalPhases.has(stored.status) && stored.finished_at !== null) {
        if (stored.status !== "Succeeded") throw new Error(`the engine run ended ${stored.status}`);
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Each figure the median over the rounds (the machine may be shared: one round is noisy). */
const medianTier = (tiers: Tier[]): Tier => ({
  wallMs: median(tiers.map((t) => t.wallMs)),
  cpuMs: median(tiers.map((t) => t.cpuMs)),
  childCpuMs: median(tiers.map((t) => t.childCpuMs)),
  minWallMs: Math.min(...tiers.map((t) => t.wallMs)),
  maxWallMs: Math.max(...tiers.map((t) => t.wallMs)),
});

/**
 * Every tier once per round, interleaved, `rounds` times (BENCH_ENGINE_ROUNDS: 1 by default, to
 * keep `npm run bench` short; 3 or more for steadier figures); each figure is the median over the rounds.
 */
export async function engineOverhead(
  concurrency = cpus().length,
  rounds = Math.max(1, Number(process.env.BENCH_ENGINE_ROUNDS ?? 1)),
): Promise<EngineOverhead & { rounds: number }> {
  const available = await sandboxAvailable();
  if (!available.ok) throw new Error(`(f) needs the local step sandbox: ${available.why}`);
  const dir = mkdtempSync(join(tmpdir(), "pipewright-bench-engine-"));
  // Opened first and kept open: every tier then spawns from a process of the same size, as the
  // server's is (fork's cost grows with the parent's memory: Prisma and SQLite make it bigger).
  let target: DomainOnSqlite | undefined;
  try {
    target = await openDomain(join(dir, "engine-db"), concurrency);
    const workflow = fanOutFanIn();
    const env = { PATH: process.env.PATH || SYSTEM_PATH, ...stepEnv };
    const scratchRoot = join(dir, "steps");
    const sandboxed = async () => {
      const step = await runStep({ argv: command, env: stepEnv }, { scratchRoot });
      await step.dispose();
      if (step.exitCode !== 0) throw new Error(`a runStep step exited with ${step.exitCode}`);
    };
    const script = join(dir, "namespaces.sh");
    writeFileSync(script, `exec env -i X=${stepEnv.X} PATH=${SYSTEM_PATH} ${command.slice(0, 2).join(" ")} '${command[2]}'\n`);
    const namespaces = await sandboxCommand(script);

    // Warm-up: the sandbox's tool lookup, page cache, JIT of the engine and the recorder.
    await pool(6, concurrency, () => spawnAndWait(command[0], command.slice(1), env));
    await pool(6, concurrency, sandboxed);
    await engineTier(join(dir, "warm-up"), concurrency, fanOutFanIn(4));
    await engineDbTier(target, fanOutFanIn(4));

    const measured: Record<"spawn" | "namespaces" | "runStep" | "engine" | "engineDb", Tier[]> = {
      spawn: [],
      namespaces: [],
      runStep: [],
      engine: [],
      engineDb: [],
    };
    for (let round = 0; round < rounds; round++) {
      measured.spawn.push(await timed(() => pool(totalSteps, concurrency, () => spawnAndWait(command[0], command.slice(1), env))));
      measured.namespaces.push(
        await timed(() => pool(totalSteps, concurrency, () => spawnAndWait(namespaces.file, namespaces.args, { PATH: SYSTEM_PATH }))),
      );
      measured.runStep.push(await timed(() => pool(totalSteps, concurrency, sandboxed)));
      measured.engine.push(await engineTier(join(dir, `engine-${round}`), concurrency, workflow));
      measured.engineDb.push(await engineDbTier(target, workflow));
    }
    return {
      steps: totalSteps,
      concurrency,
      rounds,
      spawn: medianTier(measured.spawn),
      namespaces: medianTier(measured.namespaces),
      runStep: medianTier(measured.runStep),
      engine: medianTier(measured.engine),
      engineDb: medianTier(measured.engineDb),
    };
  } finally {
    await target?.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
