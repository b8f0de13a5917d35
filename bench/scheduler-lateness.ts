// (g) Scheduler: 1,000 enabled jobs on a 1-second period (max_concurrency 10) on SQLite, a real
// Scheduler on the system clock for BENCH_SCHEDULER_SECONDS (30) seconds. Measured: each run's
// firing lateness, and the CPU the process spends meanwhile (it does nothing else then).
//
// Lateness of a run = when the scheduler hands it over (onRunCreated, right after the transaction
// that created it committed: when the server would submit it to the engine) − its scheduled_at.
// Also reported: the run's created_at (the start of the pass that claimed it) − scheduled_at.
//
// The runs are not executed (that would measure the engine): the row builder is the scheduler's
// own (cachingRunFactory) with the status set to Succeeded, so that max_concurrency never holds a
// job back and every pass still counts each due job's unfinished runs as usual.
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { JobSchema } from "../gen/proto/kfp/job_pb.js";
import { Relationship, ResourceType } from "../gen/proto/kfp/resource_reference_pb.js";
import { FilesystemArtifactStore } from "../src/artifacts/store.js";
import { cachingRunFactory } from "../src/scheduler/scheduled-run.js";
import { Scheduler } from "../src/scheduler/scheduler.js";
import { RunStatus } from "../src/services/pipelines/run-status.js";
import { pipelinesDomain } from "../src/services/pipelines/index.js";
import { openDatabase } from "../src/store/database.js";

const manifest = JSON.stringify({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Workflow",
  metadata: { generateName: "tick-" },
  spec: {
    entrypoint: "main",
    arguments: { parameters: [{ name: "when" }, { name: "index" }] },
    templates: [
      {
        name: "main",
        inputs: { parameters: [{ name: "when" }, { name: "index" }] },
        container: { image: "alpine", command: ["sh", "-c", "echo {{inputs.parameters.index}} at {{inputs.parameters.when}}"] },
      },
    ],
  },
});

export interface SchedulerLateness {
  jobs: number;
  /** The measured window: from start() until stop() returned. */
  windowMs: number;
  runsCreated: number;
  /** Slots that were due by the time stop() was called: jobs × whole periods elapsed. */
  runsExpected: number;
  /** onRunCreated time − scheduled_at, ms. */
  handedOver: { p50: number; p99: number; max: number };
  /** created_at (the claiming pass's start) − scheduled_at, ms. */
  claimed: { p50: number; p99: number; max: number };
  /** Passes that created runs: how long each took (start of runOnce to its return, notifications included). */
  passes: { count: number; p50: number; max: number };
  /** Process CPU (user + system) over the window as a fraction of one core. */
  cpuOfOneCore: number;
  cores: number;
  /** The host's 1-minute load average at the end of the window (the machine may be shared). */
  loadAverage: number;
  /** Problems the scheduler logged, and duplicate (job, slot) runs found afterwards. */
  errors: number;
  duplicates: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

const summary = (samples: number[]) => {
  const sorted = Float64Array.from(samples).sort();
  const list = Array.from(sorted);
  return { p50: percentile(list, 50), p99: percentile(list, 99), max: list.at(-1) ?? NaN };
};

export async function schedulerLateness(
  seconds = Number(process.env.BENCH_SCHEDULER_SECONDS ?? 30),
  jobCount = Number(process.env.BENCH_SCHEDULER_JOBS ?? 1000),
): Promise<SchedulerLateness> {
  const dir = mkdtempSync(join(tmpdir(), "pipewright-bench-scheduler-"));
  try {
    const db = await openDatabase(`file:${join(dir, "scheduler.db")}`);
    const domain = pipelinesDomain(db, new FilesystemArtifactStore(join(dir, "artifacts")), {
      scratchRoot: join(dir, "work"),
      maxConcurrentSteps: 2,
    });
    let scheduler: Scheduler | undefined;
    try {
      const experimentId = (await domain.experiments.create("bench-scheduler", "")).id;
      const parameters = [
        { name: "when", value: "[[ScheduledTime]]" },
        { name: "index", value: "[[Index]]" },
      ];
      for (let i = 0; i < jobCount; i++) {
        await domain.jobs.create(
          create(JobSchema, {
            name: `every-second-${i}`,
            pipelineSpec: { workflowManifest: manifest, parameters },
            resourceReferences: [{ key: { type: ResourceType.EXPERIMENT, id: experimentId }, relationship: Relationship.OWNER }],
            maxConcurrency: 10n,
            trigger: { trigger: { case: "periodicSchedule", value: { intervalSecond: 1n } } },
          }),
        );
      }
      // Bench set-up: every job starts at the current whole second, so that the first slot of all
      // of them is the next whole second (creating 1,000 jobs takes a while; without this the
      // early ones would open the window with a catch-up).
      const startTime = Math.floor(Date.now() / 1000) * 1000;
      await db.prisma.job.updateMany({ data: { startTime: BigInt(startTime) } });

      const handedOver: number[] = [];
      const claimed: number[] = [];
      let errors = 0;
      const build = cachingRunFactory();
      scheduler = new Scheduler({
        db,
        createRunForSlot: (job, firing) => ({ ...build(job, firing), status: RunStatus.succeeded, finishedAt: BigInt(firing.now) }),
        onRunCreated: (row) => {
          const slot = Number(row.scheduledAt);
          handedOver.push(Date.now() - slot);
          claimed.push(Number(row.createdAt) - slot);
        },
        log: { warn: () => errors++, error: () => errors++ },
      });
      // Times each pass that fired (the loop calls runOnce through the instance).
      const passes: number[] = [];
      const runOnce = scheduler.runOnce.bind(scheduler);
      scheduler.runOnce = async () => {
        const began = performance.now();
        const result = await runOnce();
        if (result.created > 0) passes.push(performance.now() - began);
        return result;
      };

      const cpu = process.cpuUsage();
      const start = performance.now();
      scheduler.start();
      await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
      const stoppedAt = Date.now();
      await scheduler.stop();
      const windowMs = performance.now() - start;
      const used = process.cpuUsage(cpu);
      const loadAverage = loadavg()[0];
      scheduler = undefined;

      const [{ runs, slots }] = await db.prisma.$queryRawUnsafe<{ runs: bigint; slots: bigint }[]>(
        "SELECT COUNT(*) AS runs, COUNT(DISTINCT job_id || ':' || scheduled_at) AS slots FROM run",
      );
      return {
        jobs: jobCount,
        windowMs,
        runsCreated: handedOver.length,
        runsExpected: jobCount * Math.max(0, Math.floor((stoppedAt - startTime) / 1000)),
        handedOver: summary(handedOver),
        claimed: summary(claimed),
        passes: { count: passes.length, p50: summary(passes).p50, max: summary(passes).max },
        cpuOfOneCore: (used.user + used.system) / 1000 / windowMs,
        cores: cpus().length,
        loadAverage,
        errors,
        duplicates: Number(runs) - Number(slots),
      };
    } finally {
      await scheduler?.stop();
      await domain.engine.close();
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
