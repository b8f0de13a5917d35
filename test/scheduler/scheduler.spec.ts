// The scheduler against a real database (SQLite, and PostgreSQL when available), with a clock the
// tests move: firing, catch-up, max_concurrency, enable/disable, one-off jobs, end_time, macros,
// names, deleted experiments, crash safety and the sleep/wake loop.
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { create } from "@bufbuild/protobuf";
import { JobSchema } from "../../gen/proto/kfp/job_pb.js";
import { Relationship, ResourceType } from "../../gen/proto/kfp/resource_reference_pb.js";
import { scheduledRunName, scheduledRunRow } from "../../src/scheduler/scheduled-run.js";
import { Scheduler, type SchedulerOptions } from "../../src/scheduler/scheduler.js";
import { Experiments } from "../../src/services/pipelines/experiments.js";
import { Jobs } from "../../src/services/pipelines/jobs.js";
import { ExperimentStore } from "../../src/store/pipelines/experiment-store.js";
import { JobStore } from "../../src/store/pipelines/job-store.js";
import { PipelineStore } from "../../src/store/pipelines/pipeline-store.js";
import type { RunRow } from "../../src/store/pipelines/run-store.js";
import {
  databases,
  day,
  FakeClock,
  finishRuns,
  hour,
  insertExperiment,
  insertJob,
  jobById,
  minute,
  openTestDatabase,
  runsOf,
  second,
  slotsOf,
  workflowManifest,
  type TestDatabase,
} from "./helpers.js";

const t0 = Date.parse("2026-03-01T10:00:00Z");

describe.each(databases)("scheduler on %s", (kind) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await openTestDatabase(kind);
  });
  afterAll(async () => {
    await db?.dispose();
  });
  // The tests share a database: earlier tests' jobs are parked so that passes see only their own.
  beforeEach(async () => {
    await db.prisma.job.updateMany({ data: { enabled: false } });
  });

  function scheduler(clock: FakeClock, options: Partial<SchedulerOptions> = {}) {
    const created: RunRow[] = [];
    const errors: unknown[] = [];
    const s = new Scheduler({
      db,
      clock,
      onRunCreated: (row) => {
        created.push(row);
      },
      log: { warn: () => {}, error: (details) => errors.push(details) },
      ...options,
    });
    return { s, created, errors };
  }

  it("fires a periodic job at creation + interval, once per slot, with a complete run", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, {
      name: "every-minute",
      experimentId,
      intervalSecond: 60,
      createdAt: t0 + 400,
      pipelineId: "pipeline-1",
      parameters: [{ name: "when", value: "[[ScheduledTime]]" }],
    });
    const clock = new FakeClock(t0 + 59 * second);
    const { s, created } = scheduler(clock);

    const early = await s.runOnce();
    expect(early.created).toBe(0);
    expect(early.nextAt).toBeLessThanOrEqual(t0 + minute);

    clock.set(t0 + minute + 250);
    expect((await s.runOnce()).created).toBe(1);
    expect((await s.runOnce()).created).toBe(0);

    const runs = await runsOf(db, job.id);
    expect(runs).toHaveLength(1);
    const [run] = runs;
    expect(run).toMatchObject({
      name: scheduledRunName("every-minute", 1),
      experimentId,
      jobId: job.id,
      pipelineId: "pipeline-1",
      workflowManifest,
      scheduledAt: BigInt(t0 + minute),
      createdAt: BigInt(t0 + minute + 250),
      status: "Pending",
      parameters: JSON.stringify([{ name: "when", value: "20260301100100" }]),
    });
    expect(created).toEqual([run]); // every column stored as built
    expect(await jobById(db, job.id)).toMatchObject({ firedCount: 1, lastScheduledAt: BigInt(t0 + minute), status: "Enabled" });

    clock.set(t0 + 2 * minute);
    await finishRuns(db, job.id);
    expect((await s.runOnce()).created).toBe(1);
    expect((await runsOf(db, job.id)).map((r) => r.name)).toEqual([scheduledRunName("every-minute", 1), scheduledRunName("every-minute", 2)]);
  });

  it("fires a cron job on its matches", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, { experimentId, cron: "0 */15 * * * *", createdAt: t0 + 5 * minute, maxConcurrency: 10 });
    const clock = new FakeClock(t0 + hour - second);
    const { s } = scheduler(clock);
    expect((await s.runOnce()).created).toBe(3);
    expect(slotsOf(await runsOf(db, job.id))).toEqual([t0 + 15 * minute, t0 + 30 * minute, t0 + 45 * minute]);
  });

  it("catches up a daily job started a year ago: 365 runs, historical slots, max_concurrency per pass", async () => {
    const now = t0;
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, { experimentId, cron: "@daily", startTime: now - 365 * day - hour, createdAt: now, maxConcurrency: 10 });
    const clock = new FakeClock(now);
    const { s } = scheduler(clock);

    const first = await s.runOnce();
    expect(first.created).toBe(10);
    expect((await s.runOnce()).created).toBe(0); // ten unfinished runs: blocked
    const firstSlots = slotsOf(await runsOf(db, job.id));
    expect(firstSlots[0]).toBe(Date.parse("2025-03-02T00:00:00Z"));

    let passes = 1;
    for (;;) {
      await finishRuns(db, job.id);
      const pass = await s.runOnce();
      passes++;
      expect(pass.created).toBeLessThanOrEqual(10);
      if (pass.created === 0) break;
    }
    const slots = slotsOf(await runsOf(db, job.id));
    expect(slots).toHaveLength(365);
    expect(passes).toBe(38);
    expect(new Set(slots).size).toBe(365);
    slots.forEach((slot, i) => expect(slot).toBe(Date.parse("2025-03-02T00:00:00Z") + i * day));
    expect(await jobById(db, job.id)).toMatchObject({ firedCount: 365, lastScheduledAt: BigInt(Date.parse("2026-03-01T00:00:00Z")) });
  });

  it("with no_catchup fires the same year-old job once, at the latest slot", async () => {
    const now = t0;
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, {
      experimentId,
      cron: "@daily",
      startTime: now - 365 * day - hour,
      createdAt: now,
      maxConcurrency: 10,
      noCatchup: true,
    });
    const clock = new FakeClock(now);
    const { s } = scheduler(clock);
    expect((await s.runOnce()).created).toBe(1);
    await finishRuns(db, job.id);
    const pass = await s.runOnce();
    expect(pass.created).toBe(0);
    expect(pass.nextAt).toBe(Date.parse("2026-03-02T00:00:00Z"));
    expect(slotsOf(await runsOf(db, job.id))).toEqual([Date.parse("2026-03-01T00:00:00Z")]);

    clock.set(Date.parse("2026-03-02T00:00:01Z"));
    expect((await s.runOnce()).created).toBe(1);
    expect(slotsOf(await runsOf(db, job.id))).toEqual([Date.parse("2026-03-01T00:00:00Z"), Date.parse("2026-03-02T00:00:00Z")]);
  });

  it("never has more than max_concurrency unfinished runs; finished runs free room", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, { experimentId, intervalSecond: 1, createdAt: t0, maxConcurrency: 2 });
    const clock = new FakeClock(t0 + 5 * second);
    const { s } = scheduler(clock);
    expect((await s.runOnce()).created).toBe(2);
    const blocked = await s.runOnce();
    expect(blocked).toMatchObject({ created: 0, blocked: 1 });
    expect(blocked.nextAt).toBe(clock.now() + 1000); // polls for room

    await db.prisma.run.updateMany({ where: { jobId: job.id, scheduledAt: BigInt(t0 + second) }, data: { status: "Failed" } });
    expect((await s.runOnce()).created).toBe(1);
    expect(slotsOf(await runsOf(db, job.id))).toEqual([t0 + second, t0 + 2 * second, t0 + 3 * second]);
  });

  it("disable stops firing at once; enable resumes under the catch-up rule", async () => {
    const experimentId = await insertExperiment(db);
    const store = new JobStore(db.prisma);
    const catchup = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0, maxConcurrency: 10 });
    const latest = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0, maxConcurrency: 10, noCatchup: true });
    const clock = new FakeClock(t0 + minute);
    const { s } = scheduler(clock);
    expect((await s.runOnce()).created).toBe(2);

    for (const job of [catchup, latest]) await store.setEnabled(job.id, false, "Disabled", BigInt(clock.now()));
    clock.set(t0 + 6 * minute);
    expect((await s.runOnce()).created).toBe(0);
    expect(await jobById(db, catchup.id)).toMatchObject({ enabled: false, status: "Disabled" });

    for (const job of [catchup, latest]) await store.setEnabled(job.id, true, "Enabled", BigInt(clock.now()));
    expect((await s.runOnce()).created).toBe(6);
    expect(slotsOf(await runsOf(db, catchup.id))).toEqual([1, 2, 3, 4, 5, 6].map((k) => t0 + k * minute));
    expect(slotsOf(await runsOf(db, latest.id))).toEqual([t0 + minute, t0 + 6 * minute]);
  });

  it("a disable between a pass's read and its claim wins: nothing fires", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0 });
    const clock = new FakeClock(t0 + minute);
    const store = new JobStore(db.prisma);
    // The run is built after the pass read the job and before it claims the slot.
    const { s } = scheduler(clock, {
      createRunForSlot: async (row, firing) => {
        await store.setEnabled(job.id, false, "Disabled", 0n);
        return scheduledRunRow(row, firing);
      },
    });
    expect(await s.runOnce()).toMatchObject({ created: 0, conflicts: 1, again: true });
    expect(await s.runOnce()).toMatchObject({ created: 0, conflicts: 0, again: false });
    expect(await runsOf(db, job.id)).toEqual([]);
    expect(await jobById(db, job.id)).toMatchObject({ firedCount: 0, enabled: false });
  });

  it("fires a one-off job once, at creation, then reads Succeeded", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, { name: "once", experimentId, createdAt: t0 + 700 });
    const clock = new FakeClock(t0 + 2 * second);
    const { s } = scheduler(clock);
    expect((await s.runOnce()).created).toBe(1);
    clock.advance(day);
    await finishRuns(db, job.id);
    expect((await s.runOnce()).created).toBe(0);
    expect(slotsOf(await runsOf(db, job.id))).toEqual([t0]);
    expect(await jobById(db, job.id)).toMatchObject({ status: "Succeeded", firedCount: 1, enabled: true });

    // Re-enabling writes Enabled; the scheduler puts Succeeded back and fires nothing.
    const store = new JobStore(db.prisma);
    await store.setEnabled(job.id, false, "Disabled", 0n);
    await store.setEnabled(job.id, true, "Enabled", 0n);
    expect((await s.runOnce()).created).toBe(0);
    expect((await jobById(db, job.id)).status).toBe("Succeeded");
  });

  it("never fires after end_time, and waits for start_time", async () => {
    const experimentId = await insertExperiment(db);
    const ending = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0, endTime: t0 + 2 * minute + 30 * second, maxConcurrency: 10 });
    const starting = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0, startTime: t0 + hour, maxConcurrency: 10 });
    const clock = new FakeClock(t0 + 10 * minute);
    const { s } = scheduler(clock);
    await s.runOnce();
    await finishRuns(db, ending.id);
    const pass = await s.runOnce();
    expect(slotsOf(await runsOf(db, ending.id))).toEqual([t0 + minute, t0 + 2 * minute]);
    expect(slotsOf(await runsOf(db, starting.id))).toEqual([]);
    expect(pass.nextAt).toBe(t0 + hour + minute);

    clock.set(t0 + hour + minute);
    await s.runOnce();
    expect(slotsOf(await runsOf(db, starting.id))).toEqual([t0 + hour + minute]);
  });

  it("expands the parameter macros per run, in the parameters and the runtime workflow", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, {
      name: "macros",
      experimentId,
      intervalSecond: 3600,
      startTime: Date.parse("2026-03-01T08:00:00Z"),
      createdAt: t0,
      maxConcurrency: 10,
      parameters: [
        { name: "when", value: "[[ScheduledTime.2006-01-02 15h]] at [[CurrentTime]]" },
        { name: "n", value: "[[Index]]/[[ScheduledTime]]" },
      ],
    });
    const clock = new FakeClock(t0 + 1234);
    const { s } = scheduler(clock);
    await s.runOnce();
    const runs = await runsOf(db, job.id);
    expect(runs.map((r) => JSON.parse(r.parameters))).toEqual(
      ["2026-03-01 09h|20260301090000", "2026-03-01 10h|20260301100000"].map((x, i) => {
        const [day, stamp] = x.split("|");
        return [
          { name: "when", value: `${day} at 20260301100001` },
          { name: "n", value: `${i + 1}/${stamp}` },
        ];
      }),
    );
    expect(runs.map((r) => r.name)).toEqual([scheduledRunName("macros", 1), scheduledRunName("macros", 2)]);
    const runtime = JSON.parse(runs[1].runtimeManifest);
    expect(runtime.spec.arguments.parameters).toEqual([
      { name: "when", value: "2026-03-01 10h at 20260301100001" },
      { name: "n", value: "2/20260301100000" },
    ]);
  });

  it("fires jobs made by the Jobs service, owned by their experiment", async () => {
    const experiments = new Experiments(new ExperimentStore(db.prisma));
    const jobs = new Jobs(new JobStore(db.prisma), new PipelineStore(db.prisma), experiments);
    const experiment = await experiments.create(`service-${kind}-${Date.now()}`, "");
    const row = await jobs.create(create(JobSchema, {
      name: "from-service",
      maxConcurrency: 0n,
      pipelineSpec: { workflowManifest, parameters: [{ name: "when", value: "[[Index]]" }] },
      resourceReferences: [{ key: { type: ResourceType.EXPERIMENT, id: experiment.id }, relationship: Relationship.OWNER }],
      trigger: { trigger: { case: "periodicSchedule", value: { intervalSecond: 2n, startTime: timestampFromMs(t0) } } },
    }));
    const clock = new FakeClock(t0 + 2 * second);
    const { s, created } = scheduler(clock);
    await s.runOnce();
    expect(created.map((r) => [r.name, r.experimentId, r.jobId, r.parameters])).toEqual([
      [scheduledRunName("from-service", 1), experiment.id, row.id, JSON.stringify([{ name: "when", value: "1" }])],
    ]);
  });

  it("disables a job whose experiment was deleted instead of firing it", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0 });
    await db.prisma.experiment.delete({ where: { id: experimentId } });
    const clock = new FakeClock(t0 + 5 * minute);
    const { s } = scheduler(clock);
    expect((await s.runOnce()).created).toBe(0);
    expect(await runsOf(db, job.id)).toEqual([]);
    expect(await jobById(db, job.id)).toMatchObject({ enabled: false, status: "Disabled", firedCount: 0 });
  });

  it("loses nothing when the transaction fails after the claim", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0, maxConcurrency: 5 });
    const other = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0, maxConcurrency: 5 });
    const clock = new FakeClock(t0 + 3 * minute);
    // The second slot's run reuses the first's id: its insert fails after both claims.
    let firstId: string | undefined;
    const broken = scheduler(clock, {
      createRunForSlot: (row, firing) => {
        const run = scheduledRunRow(row, firing);
        if (row.id !== job.id) return run;
        firstId ??= run.id;
        return { ...run, id: firstId };
      },
    });
    const pass = await broken.s.runOnce();
    expect(broken.errors.length).toBeGreaterThan(0);
    expect(pass.created).toBe(3); // the other job is not held back
    expect(await runsOf(db, job.id)).toEqual([]);
    expect(await jobById(db, job.id)).toMatchObject({ firedCount: 0, lastScheduledAt: null });
    expect(broken.created.every((r) => r.jobId === other.id)).toBe(true);

    const healthy = scheduler(clock);
    expect((await healthy.s.runOnce()).created).toBe(3);
    expect(slotsOf(await runsOf(db, job.id))).toEqual([t0 + minute, t0 + 2 * minute, t0 + 3 * minute]);
  });

  it("keeps going when onRunCreated throws, and skips a job whose cron does not parse", async () => {
    const experimentId = await insertExperiment(db);
    const job = await insertJob(db, { experimentId, intervalSecond: 60, createdAt: t0 });
    const bad = await insertJob(db, { experimentId, cron: "not a cron", createdAt: t0 });
    const clock = new FakeClock(t0 + minute);
    const { s, errors } = scheduler(clock, {
      onRunCreated: () => {
        throw new Error("engine down");
      },
    });
    expect((await s.runOnce()).created).toBe(1);
    expect(await runsOf(db, job.id)).toHaveLength(1);
    expect(await runsOf(db, bad.id)).toHaveLength(0);
    expect(errors).toHaveLength(2);
    await s.runOnce();
    expect(errors).toHaveLength(2); // the bad trigger is reported once
    await db.prisma.job.update({ where: { id: bad.id }, data: { enabled: false } });
  });

  it("sleeps until the next slot (at most 1 s), wakes on wake(), and stop() waits for the pass", async () => {
    const experimentId = await insertExperiment(db);
    const clock = new FakeClock(t0 + 10 * second);
    const job = await insertJob(db, { experimentId, intervalSecond: 1, createdAt: t0 + 10 * second + 100, maxConcurrency: 10 });
    const { s, created } = scheduler(clock);
    const settle = async (condition: () => boolean) => {
      for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(condition()).toBe(true);
    };
    s.start();
    await settle(() => clock.sleeping === 1);
    expect(clock.sleeps.at(-1)).toBe(1000); // the slot at t0 + 11 s

    clock.set(t0 + 11 * second + 300);
    await settle(() => created.length === 1 && clock.sleeping === 1);
    expect(clock.sleeps.at(-1)).toBe(700);

    // A new job created meanwhile fires on wake(), without the clock moving.
    const once = await insertJob(db, { experimentId, createdAt: t0 + 11 * second });
    s.wake();
    await settle(() => created.some((r) => r.jobId === once.id));

    clock.set(t0 + 20 * second);
    await settle(() => created.length >= 10);
    await s.stop();
    expect(clock.sleeping).toBe(0);
    const count = (await runsOf(db, job.id)).length;
    clock.advance(5 * second);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await runsOf(db, job.id)).length).toBe(count);
    expect(slotsOf(await runsOf(db, job.id))).toEqual(Array.from({ length: 10 }, (_, i) => t0 + (11 + i) * second));
  });
});
