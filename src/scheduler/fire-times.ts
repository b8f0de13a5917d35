// When a job fires: its slots that are due now and the next one after them. Pure: no I/O.
//
// The rules, as KFP's ScheduledWorkflow controller applied them (kfp-behavior.md §6.5), plus
// `no_catchup`:
// - base = the last scheduled slot if the job has fired before, else start_time if set, else
//   the creation time; raised to start_time if that is later;
// - cron: the first match strictly after the base; periodic: base + interval (so a periodic
//   job first fires at start, or creation, plus the interval); `@every <duration>` is periodic
//   too, as robfig/cron's constant-delay schedule is;
// - slots after end_time never fire; a job without a trigger fires once, at its creation;
// - catch-up: every missed slot fires, one run each, oldest first; with no_catchup only the
//   latest missed slot fires (the earlier ones are skipped for good).
// All times are epoch milliseconds. The base is truncated to whole seconds, as KFP stored
// times in seconds, so every slot of a periodic or cron job falls on a whole second.
//
// Cost: periodic slots are arithmetic (O(1) to find the latest, O(count) to list `count`).
// Cron slots are listed with `nextAfter`, never more than `maxCount` + 1 calls. The latest
// cron slot at or before now (no_catchup) is found by bisection on the time axis, since
// "a slot lies in (t, now]" is monotone in t: about log2(now − base) calls, 35 for a year,
// whatever the cron's frequency, instead of enumerating every slot since the base.
import { parseCron, type CronSchedule } from "./cron.js";

export type Trigger =
  | { kind: "cron"; schedule: CronSchedule }
  | { kind: "periodic"; intervalMs: number }
  | { kind: "once" };

export interface JobTiming {
  trigger: Trigger;
  createdAt: number;
  startTime?: number | null;
  endTime?: number | null;
  /** The slot of the job's latest run; null or undefined when it has never fired. */
  lastScheduledAt?: number | null;
  noCatchup: boolean;
}

export interface FireTimes {
  /** The slots to fire now, oldest first, at most `maxCount` of them. */
  due: number[];
  /**
   * The slot that would fire after `due`: in the future when everything due was returned; at
   * or before now when `maxCount` cut the list short. Undefined when the job never fires again.
   */
  next: number | undefined;
}

const secondMs = 1000;
const wholeSecond = (ms: number): number => Math.floor(ms / secondMs) * secondMs;

const triggerCache = new Map<string, Trigger>();
const triggerCacheLimit = 10_000;

/**
 * The trigger a stored job has: a cron expression (an empty one counts as none), else a period
 * in seconds (0 is treated as 1, as KFP did), else none. Throws InvalidArgument for a cron
 * expression that does not parse. Parsed expressions are cached.
 */
export function triggerOf(job: { cron: string | null; intervalSecond: bigint | number | null }): Trigger {
  if (job.cron !== null && job.cron.trim() !== "") {
    const cached = triggerCache.get(job.cron);
    if (cached) return cached;
    const schedule = parseCron(job.cron);
    const trigger: Trigger = /^@every\s/.test(job.cron.trim())
      ? // A constant delay: the schedule's step, whole seconds as robfig/cron truncates it.
        { kind: "periodic", intervalMs: Math.max(secondMs, wholeSecond(schedule.nextAfter(0) ?? secondMs)) }
      : { kind: "cron", schedule };
    if (triggerCache.size >= triggerCacheLimit) triggerCache.clear();
    triggerCache.set(job.cron, trigger);
    return trigger;
  }
  if (job.intervalSecond !== null) {
    return { kind: "periodic", intervalMs: Math.max(1, Number(job.intervalSecond)) * secondMs };
  }
  return { kind: "once" };
}

/** The time the job's next slot is counted from (see the rules above). */
export function baseTime(job: JobTiming): number {
  const start = job.startTime ?? undefined;
  const base = wholeSecond(job.lastScheduledAt ?? start ?? job.createdAt);
  return start !== undefined && wholeSecond(start) > base ? wholeSecond(start) : base;
}

/** The job's slots due at `now` (at most `maxCount`) and the slot after them. */
export function fireTimes(job: JobTiming, now: number, maxCount: number): FireTimes {
  const limit = Math.max(0, Math.floor(maxCount));
  switch (job.trigger.kind) {
    case "once":
      return onceFireTimes(job, now, limit);
    case "periodic":
      return periodicFireTimes(job, job.trigger.intervalMs, now, limit);
    case "cron":
      return cronFireTimes(job, job.trigger.schedule, now, limit);
  }
}

function onceFireTimes(job: JobTiming, now: number, maxCount: number): FireTimes {
  if (job.lastScheduledAt !== null && job.lastScheduledAt !== undefined) return { due: [], next: undefined };
  const slot = wholeSecond(job.createdAt);
  if (slot > now || maxCount === 0) return { due: [], next: slot };
  return { due: [slot], next: undefined };
}

const withinEnd = (job: JobTiming, slot: number | undefined): number | undefined =>
  slot === undefined || (job.endTime !== null && job.endTime !== undefined && slot > job.endTime) ? undefined : slot;

function periodicFireTimes(job: JobTiming, intervalMs: number, now: number, maxCount: number): FireTimes {
  const base = baseTime(job);
  const slot = (k: number) => base + k * intervalMs;
  const first = withinEnd(job, slot(1));
  if (first === undefined || first > now) return { due: [], next: first };
  const horizon = Math.min(now, job.endTime ?? Number.POSITIVE_INFINITY);
  // Slots 1..missed lie in (base, horizon]; missed >= 1 since the first one does.
  const missed = Math.floor((horizon - base) / intervalMs);
  if (job.noCatchup) {
    if (maxCount === 0) return { due: [], next: slot(missed) };
    return { due: [slot(missed)], next: withinEnd(job, slot(missed + 1)) };
  }
  const count = Math.min(missed, maxCount);
  const due = Array.from({ length: count }, (_, i) => slot(i + 1));
  return { due, next: withinEnd(job, slot(count + 1)) };
}

function cronFireTimes(job: JobTiming, schedule: CronSchedule, now: number, maxCount: number): FireTimes {
  const base = baseTime(job);
  const first = withinEnd(job, schedule.nextAfter(base));
  if (first === undefined || first > now) return { due: [], next: first };
  const horizon = Math.min(now, job.endTime ?? Number.POSITIVE_INFINITY);
  if (job.noCatchup) {
    const latest = latestSlot(schedule, base, horizon);
    if (maxCount === 0) return { due: [], next: latest };
    return { due: [latest], next: withinEnd(job, schedule.nextAfter(latest)) };
  }
  const due: number[] = [];
  let slot: number | undefined = first;
  while (slot !== undefined && slot <= horizon && due.length < maxCount) {
    due.push(slot);
    slot = schedule.nextAfter(slot);
  }
  return { due, next: withinEnd(job, slot) };
}

/**
 * The latest slot in (from, horizon], given that there is one (nextAfter(from) <= horizon).
 * Bisection keeps lo with a slot in (lo, horizon] and hi without one, so nextAfter(lo) ends as
 * the latest slot: O(log(horizon − from)) calls however many slots lie in between.
 */
export function latestSlot(schedule: CronSchedule, from: number, horizon: number): number {
  const hasSlotAfter = (t: number) => {
    const next = schedule.nextAfter(t);
    return next !== undefined && next <= horizon;
  };
  let lo = from;
  let hi = horizon;
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (hasSlotAfter(mid)) lo = mid;
    else hi = mid;
  }
  return schedule.nextAfter(lo)!;
}
