// Shared by the scheduler suites: a database of either kind, a clock the test moves, and jobs
// inserted straight into the job table.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Clock } from "../../src/scheduler/scheduler.js";
import { openDatabase, type Database } from "../../src/store/database.js";
import type { JobRow } from "../../src/store/pipelines/job-store.js";
import type { RunRow } from "../../src/store/pipelines/run-store.js";
import { databases, freshPostgresDatabase, type DatabaseKind } from "../helpers/postgres.js";

export { databases };

export const second = 1000;
export const minute = 60 * second;
export const hour = 60 * minute;
export const day = 24 * hour;

export interface TestDatabase extends Database {
  url: string;
  /** Closes the database and removes its files. */
  dispose(): Promise<void>;
}

export async function openTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === "postgresql") {
    const url = await freshPostgresDatabase();
    const db = await openDatabase(url);
    return { ...db, url, dispose: () => db.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), "pipewright-scheduler-"));
  const url = `file:${join(dir, "test.db")}`;
  const db = await openDatabase(url);
  return {
    ...db,
    url,
    async dispose() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A clock that moves only when told; sleeps end when the clock passes them or on abort. */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  private waiters: { until: number; resolve: () => void }[] = [];

  constructor(private current: number) {}

  now(): number {
    return this.current;
  }

  set(ms: number): void {
    this.current = ms;
    const ready = this.waiters.filter((w) => w.until <= ms);
    this.waiters = this.waiters.filter((w) => w.until > ms);
    ready.forEach((w) => w.resolve());
  }

  advance(ms: number): void {
    this.set(this.current + ms);
  }

  /** How many sleeps are under way. */
  get sleeping(): number {
    return this.waiters.length;
  }

  sleep(ms: number, signal: AbortSignal): Promise<void> {
    this.sleeps.push(ms);
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const waiter = { until: this.current + ms, resolve };
      this.waiters.push(waiter);
      signal.addEventListener("abort", () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve();
      });
    });
  }
}

/** A workflow with two parameters, as a job's stored manifest. */
export const workflowManifest = JSON.stringify({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Workflow",
  metadata: { generateName: "hello-" },
  spec: {
    entrypoint: "main",
    arguments: { parameters: [{ name: "when", value: "never" }, { name: "n", value: "0" }] },
    templates: [{ name: "main", container: { image: "alpine", command: ["echo", "{{workflow.parameters.when}}"] } }],
  },
});

export async function insertExperiment(db: Database, name = `experiment-${randomUUID()}`): Promise<string> {
  const id = randomUUID();
  await db.prisma.experiment.create({ data: { id, name, description: "", createdAt: 0n } });
  return id;
}

export interface JobInput {
  name?: string;
  experimentId: string;
  cron?: string;
  intervalSecond?: number;
  startTime?: number;
  endTime?: number;
  enabled?: boolean;
  noCatchup?: boolean;
  maxConcurrency?: number;
  createdAt: number;
  parameters?: { name: string; value: string }[];
  pipelineId?: string;
}

export async function insertJob(db: Database, input: JobInput): Promise<JobRow> {
  const enabled = input.enabled ?? true;
  return db.prisma.job.create({
    data: {
      id: randomUUID(),
      name: input.name ?? "job",
      description: "",
      experimentId: input.experimentId,
      pipelineId: input.pipelineId ?? null,
      workflowManifest,
      parameters: JSON.stringify(input.parameters ?? []),
      maxConcurrency: input.maxConcurrency ?? 1,
      cron: input.cron ?? null,
      intervalSecond: input.intervalSecond === undefined ? null : BigInt(input.intervalSecond),
      startTime: input.startTime === undefined ? null : BigInt(input.startTime),
      endTime: input.endTime === undefined ? null : BigInt(input.endTime),
      enabled,
      noCatchup: input.noCatchup ?? false,
      status: enabled ? "Enabled" : "Disabled",
      createdAt: BigInt(input.createdAt),
      updatedAt: BigInt(input.createdAt),
      firedCount: 0,
      lastScheduledAt: null,
    },
  });
}

export async function runsOf(db: Database, jobId: string): Promise<RunRow[]> {
  return db.prisma.run.findMany({ where: { jobId }, orderBy: [{ scheduledAt: "asc" }, { id: "asc" }] });
}

export const slotsOf = (runs: RunRow[]): number[] => runs.map((r) => Number(r.scheduledAt));

/** Marks every unfinished run of the job Succeeded. */
export async function finishRuns(db: Database, jobId: string): Promise<void> {
  await db.prisma.run.updateMany({ where: { jobId, status: { notIn: ["Succeeded", "Failed", "Error"] } }, data: { status: "Succeeded" } });
}

export async function jobById(db: Database, id: string): Promise<JobRow> {
  return db.prisma.job.findUniqueOrThrow({ where: { id } });
}
