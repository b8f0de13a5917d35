// The scheduler: fires enabled jobs' runs on their cron or periodic schedule, exactly once per
// slot, never more than max_concurrency unfinished at once, across any number of processes on
// one database.
//
// Exactly once: a slot is claimed with a conditional update of the job row (fired_count still
// the value this scheduler read, job still enabled) in the same transaction as the insert of the
// slot's run. Two schedulers racing for a slot both try the update; on PostgreSQL the second
// waits for the first's row lock, re-reads the row and matches nothing; SQLite runs one writer at
// a time. A crash before commit rolls back claim and run together, so the slot stays due.
//
// max_concurrency: each pass reads a job, then counts its unfinished runs, then claims with the
// fired_count it read. Any run created by anyone after that read bumped fired_count, so the
// claim fails and the pass starts over; runs that finish meanwhile only lower the count.
//
// Waking: after a pass the loop sleeps until the earliest next slot of any job, at most
// `maxSleepMs` (1 s), so that jobs created or enabled by another process (or blocked by
// max_concurrency) are seen soon. `wake()` ends the sleep at once.
import { JobStatus } from "../services/pipelines/jobs.js";
import { isFinished, RunStatus } from "../services/pipelines/run-status.js";
import type { Database } from "../store/database.js";
import { JobStore, type JobRow, type JobSchedulingRow } from "../store/pipelines/job-store.js";
import { RunStore, type RunRow } from "../store/pipelines/run-store.js";
import { fireTimes, triggerOf, type JobTiming, type Trigger } from "./fire-times.js";
import { cachingRunFactory, type CreateRunForSlot } from "./scheduled-run.js";

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  /** Resolves after `ms`, or as soon as `signal` aborts; never rejects. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms, signal) =>
    new Promise((resolve) => {
      if (signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done);
    }),
};

/** Where the scheduler reports problems (a pino logger fits). */
export interface SchedulerLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface SchedulerOptions {
  db: Database;
  clock?: Clock;
  /** Builds the row of a slot's run; the default expands the macros and applies the job's parameters. */
  createRunForSlot?: CreateRunForSlot;
  /**
   * Called after the transaction that created the run committed (the engine submits it here),
   * once per run, in slot order per job. Errors are logged; the run stays recorded.
   */
  onRunCreated?: (row: RunRow) => void | Promise<void>;
  log?: SchedulerLog;
  /** The longest sleep between passes. */
  maxSleepMs?: number;
  /** Runs created per transaction (jobs are never split across transactions). */
  firesPerTransaction?: number;
}

export interface PassResult {
  /** Runs created by this pass. */
  created: number;
  /** Claims lost to another scheduler (or to a disable) during this pass. */
  conflicts: number;
  /** Jobs with a slot due but max_concurrency unfinished runs. */
  blocked: number;
  /** When the next pass is needed: the earliest next slot, or a poll time; undefined: no job will fire. */
  nextAt: number | undefined;
  /** Whether another pass should follow at once (claims were lost and are worth retrying). */
  again: boolean;
}

/** The statuses that count as finished for max_concurrency, as isFinished decides. */
const finishedStatuses = [...Object.values(RunStatus), "Skipped"].filter(isFinished);

interface Plan {
  job: JobRow;
  slots: number[];
  rows: RunRow[];
  oneOff: boolean;
}

const noLog: SchedulerLog = { warn: () => {}, error: () => {} };

export class Scheduler {
  private readonly db: Database;
  private readonly jobs: JobStore;
  private readonly runs: RunStore;
  private readonly clock: Clock;
  private readonly createRunForSlot: CreateRunForSlot;
  private readonly onRunCreated: (row: RunRow) => void | Promise<void>;
  private readonly log: SchedulerLog;
  private readonly maxSleepMs: number;
  private readonly firesPerTransaction: number;
  /** Full rows of enabled jobs (all but the scheduling columns are immutable). */
  private readonly definitions = new Map<string, JobRow>();
  /** Per job, its next slot as last computed, valid while the job's timing columns stay the same. */
  private readonly nextSlots = new Map<string, { key: string; next: number | undefined }>();
  /** Jobs whose trigger did not parse, so that each is reported once. */
  private readonly reportedBadTriggers = new Set<string>();

  private loop: Promise<void> | undefined;
  private stopping = false;
  private woken = false;
  private sleeper: AbortController | undefined;

  constructor(options: SchedulerOptions) {
    this.db = options.db;
    this.jobs = new JobStore(options.db.prisma);
    this.runs = new RunStore(options.db.prisma);
    this.clock = options.clock ?? systemClock;
    this.createRunForSlot = options.createRunForSlot ?? cachingRunFactory();
    this.onRunCreated = options.onRunCreated ?? (() => {});
    this.log = options.log ?? noLog;
    this.maxSleepMs = options.maxSleepMs ?? 1000;
    this.firesPerTransaction = options.firesPerTransaction ?? 250;
  }

  /** Starts the loop (no-op when running). */
  start(): void {
    if (this.loop) return;
    this.stopping = false;
    this.loop = this.run();
  }

  /** Stops the loop; resolves once the pass under way, if any, has finished. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.sleeper?.abort();
    await this.loop;
    this.loop = undefined;
  }

  /** Asks for a pass now: call after a job was created or enabled, or a job's run finished. */
  wake(): void {
    this.woken = true;
    this.sleeper?.abort();
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let delay = this.maxSleepMs;
      this.woken = false;
      try {
        const pass = await this.runOnce();
        if (pass.again) delay = 0;
        else if (pass.nextAt !== undefined) delay = Math.min(this.maxSleepMs, Math.max(0, pass.nextAt - this.clock.now()));
      } catch (err) {
        this.log.error({ err }, "scheduler pass failed");
      }
      if (this.stopping || this.woken || delay === 0) continue;
      this.sleeper = new AbortController();
      await this.clock.sleep(delay, this.sleeper.signal);
      this.sleeper = undefined;
    }
  }

  /** One pass: fires every due slot that max_concurrency allows. */
  async runOnce(): Promise<PassResult> {
    const now = this.clock.now();
    const enabled = await this.jobs.schedulable();
    this.forgetJobsExcept(enabled);

    let nextAt: number | undefined;
    const wakeAt = (t: number | undefined) => {
      if (t !== undefined) nextAt = nextAt === undefined ? t : Math.min(nextAt, t);
    };
    const poll = now + this.maxSleepMs;

    const due: { job: JobSchedulingRow; timing: JobTiming }[] = [];
    for (const job of enabled) {
      const trigger = this.triggerOf(job);
      if (!trigger) continue;
      await this.keepStatusCurrent(job, trigger);
      // A job that is not due keeps its next slot until it fires or its timing changes: cron
      // matches are not free, and most passes find most jobs waiting.
      const key = timingKey(job);
      const known = this.nextSlots.get(job.id);
      if (known?.key === key && (known.next === undefined || known.next > now)) {
        wakeAt(known.next);
        continue;
      }
      const timing = timingOf(job, trigger);
      const times = fireTimes(timing, now, 1);
      if (times.due.length > 0) {
        due.push({ job, timing });
      } else {
        this.nextSlots.set(job.id, { key, next: times.next });
        wakeAt(times.next);
      }
    }
    if (due.length === 0) return { created: 0, conflicts: 0, blocked: 0, nextAt, again: false };

    // A job whose experiment is gone is disabled, not fired into nothing.
    const present = await this.jobs.existingExperimentIds([...new Set(due.map((d) => d.job.experimentId))]);
    const firing = due.filter(({ job }) => present.has(job.experimentId));
    for (const { job } of due) {
      if (present.has(job.experimentId)) continue;
      if (await this.jobs.disableIfEnabled(job.id, JobStatus.disabled, BigInt(now))) {
        this.log.warn({ jobId: job.id, experimentId: job.experimentId }, "job disabled: its experiment was deleted");
      }
    }

    const unfinished = await this.runs.countUnfinishedByJob(
      firing.map((d) => d.job.id),
      finishedStatuses,
    );
    let blocked = 0;
    const slotsOf = new Map<string, { job: JobSchedulingRow; trigger: Trigger; slots: number[] }>();
    for (const { job, timing } of firing) {
      const room = job.maxConcurrency - (unfinished.get(job.id) ?? 0);
      if (room <= 0) {
        blocked++;
        wakeAt(poll);
        continue;
      }
      const times = fireTimes(timing, now, room);
      if (times.due.length > 0) slotsOf.set(job.id, { job, trigger: timing.trigger, slots: times.due });
      // Still due after this pass: max_concurrency is reached, so look again at the poll time.
      wakeAt(times.next !== undefined && times.next <= now ? poll : times.next);
    }

    const plans = await this.prepare([...slotsOf.values()], now);
    const { created, conflicts } = await this.commit(plans, now);
    return { created, conflicts, blocked, nextAt, again: conflicts > 0 };
  }

  private triggerOf(job: JobSchedulingRow): Trigger | undefined {
    try {
      return triggerOf(job);
    } catch (err) {
      if (!this.reportedBadTriggers.has(job.id)) {
        this.reportedBadTriggers.add(job.id);
        this.log.error({ err, jobId: job.id, cron: job.cron }, "job not scheduled: its trigger does not parse");
      }
      return undefined;
    }
  }

  /** An enabled job reads `Enabled`, or `Succeeded` once a one-off job has fired. */
  private async keepStatusCurrent(job: JobSchedulingRow, trigger: Trigger): Promise<void> {
    const status = trigger.kind === "once" && job.lastScheduledAt !== null ? JobStatus.succeeded : JobStatus.enabled;
    if (job.status !== status) await this.jobs.updateStatusIfEnabled(job.id, job.status, status);
  }

  /** Drops what is kept about jobs that are no longer enabled (or no longer exist). */
  private forgetJobsExcept(enabled: readonly JobSchedulingRow[]): void {
    if (this.definitions.size === 0 && this.nextSlots.size === 0) return;
    const ids = new Set(enabled.map((job) => job.id));
    for (const map of [this.definitions, this.nextSlots]) {
      for (const id of map.keys()) if (!ids.has(id)) map.delete(id);
    }
  }

  /** Builds the runs to create, outside any transaction. */
  private async prepare(
    jobs: { job: JobSchedulingRow; trigger: Trigger; slots: number[] }[],
    now: number,
  ): Promise<Plan[]> {
    const missing = jobs.filter(({ job }) => !this.definitions.has(job.id)).map(({ job }) => job.id);
    for (const row of await this.jobs.byIds(missing)) this.definitions.set(row.id, row);
    const plans: Plan[] = [];
    for (const { job: scheduling, trigger, slots } of jobs) {
      const definition = this.definitions.get(scheduling.id);
      if (!definition) continue; // deleted meanwhile
      const job: JobRow = { ...definition, ...scheduling };
      try {
        const rows: RunRow[] = [];
        for (const [i, slot] of slots.entries()) {
          rows.push(await this.createRunForSlot(job, { scheduledAt: slot, index: job.firedCount + i + 1, now }));
        }
        plans.push({ job, slots, rows, oneOff: trigger.kind === "once" });
      } catch (err) {
        this.log.error({ err, jobId: job.id }, "could not build the run of a job's slot");
      }
    }
    // Id order, as claimSlots locks: a transaction's jobs are then a contiguous range of ids.
    return plans.sort((a, b) => (a.job.id < b.job.id ? -1 : a.job.id > b.job.id ? 1 : 0));
  }

  /** Claims and inserts in transactions of about `firesPerTransaction` runs. */
  private async commit(plans: Plan[], now: number): Promise<{ created: number; conflicts: number }> {
    let created = 0;
    let conflicts = 0;
    for (const batch of batches(plans, this.firesPerTransaction)) {
      let outcome: { rows: RunRow[]; conflicts: number }[];
      try {
        outcome = [await this.transact(batch, now)];
      } catch (err) {
        // One bad job must not hold the others back: retry them one job per transaction.
        if (batch.length === 1) {
          this.log.error({ err, jobId: batch[0].job.id }, "could not create a job's runs");
          continue;
        }
        outcome = [];
        for (const plan of batch) {
          try {
            outcome.push(await this.transact([plan], now));
          } catch (err) {
            this.log.error({ err, jobId: plan.job.id }, "could not create a job's runs");
          }
        }
      }
      for (const result of outcome) {
        conflicts += result.conflicts;
        created += result.rows.length;
        for (const row of result.rows) await this.notify(row);
      }
    }
    return { created, conflicts };
  }

  /** One transaction: claims every plan's slots at once, inserts the runs of the claims that held. */
  private async transact(plans: Plan[], now: number): Promise<{ rows: RunRow[]; conflicts: number }> {
    return this.db.prisma.$transaction(
      async (tx) => {
        const claimed = await this.jobs.claimSlots(
          plans.map((plan) => ({
            id: plan.job.id,
            expectedFiredCount: plan.job.firedCount,
            count: plan.slots.length,
            lastScheduledAt: BigInt(plan.slots[plan.slots.length - 1]),
            ...(plan.oneOff && { status: JobStatus.succeeded }),
          })),
          BigInt(now),
          this.db.provider,
          tx,
        );
        const rows = plans.filter((plan) => claimed.has(plan.job.id)).flatMap((plan) => plan.rows);
        await this.runs.insertMany(rows, this.db.provider, tx);
        return { rows, conflicts: plans.length - claimed.size };
      },
      { maxWait: 10_000, timeout: 60_000 },
    );
  }

  private async notify(row: RunRow): Promise<void> {
    try {
      await this.onRunCreated(row);
    } catch (err) {
      this.log.error({ err, runId: row.id }, "onRunCreated failed for a scheduled run");
    }
  }
}

function timingOf(job: JobSchedulingRow, trigger: Trigger): JobTiming {
  return {
    trigger,
    createdAt: Number(job.createdAt),
    startTime: job.startTime === null ? null : Number(job.startTime),
    endTime: job.endTime === null ? null : Number(job.endTime),
    lastScheduledAt: job.lastScheduledAt === null ? null : Number(job.lastScheduledAt),
    noCatchup: job.noCatchup,
  };
}

/** Everything a job's slots depend on. */
function timingKey(job: JobSchedulingRow): string {
  return [job.cron, job.intervalSecond, job.startTime, job.endTime, job.createdAt, job.lastScheduledAt, job.noCatchup].join("|");
}

/** Consecutive plans grouped until a group holds `size` runs or more. */
function batches(plans: Plan[], size: number): Plan[][] {
  const groups: Plan[][] = [];
  let group: Plan[] = [];
  let runs = 0;
  for (const plan of plans) {
    group.push(plan);
    runs += plan.slots.length;
    if (runs >= size) {
      groups.push(group);
      group = [];
      runs = 0;
    }
  }
  if (group.length > 0) groups.push(group);
  return groups;
}
