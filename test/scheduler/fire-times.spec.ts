// The slot rules, without a database.
import { describe, expect, it } from "vitest";
import { parseCron, type CronSchedule } from "../../src/scheduler/cron.js";
import { baseTime, fireTimes, latestSlot, triggerOf, type JobTiming, type Trigger } from "../../src/scheduler/fire-times.js";
import { day, hour, minute, second } from "./helpers.js";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const cron = (expression: string): Trigger => triggerOf({ cron: expression, intervalSecond: null });
const periodic = (seconds: number): Trigger => triggerOf({ cron: null, intervalSecond: BigInt(seconds) });

/** A cron schedule that counts its nextAfter calls. */
function counted(expression: string): { trigger: Trigger; calls: () => number } {
  const schedule = parseCron(expression);
  let calls = 0;
  const wrapped: CronSchedule = {
    nextAfter: (ms) => {
      calls++;
      return schedule.nextAfter(ms);
    },
  };
  return { trigger: { kind: "cron", schedule: wrapped }, calls: () => calls };
}

const job = (timing: Partial<JobTiming> & { trigger: Trigger }): JobTiming => ({
  createdAt: at("2026-03-01T10:00:00.400Z"),
  noCatchup: false,
  ...timing,
});

const due = (timing: JobTiming, now: string, max = 100) => {
  const times = fireTimes(timing, at(now), max);
  return { due: times.due.map(iso), next: iso(times.next) };
};

describe("triggers", () => {
  it("reads cron, periodic and none; @every is periodic; an interval of 0 is 1 s", () => {
    expect(cron("0 * * * * *").kind).toBe("cron");
    expect(cron("@every 1h30m")).toEqual({ kind: "periodic", intervalMs: 90 * minute });
    expect(periodic(15)).toEqual({ kind: "periodic", intervalMs: 15 * second });
    expect(periodic(0)).toEqual({ kind: "periodic", intervalMs: second });
    expect(triggerOf({ cron: null, intervalSecond: null })).toEqual({ kind: "once" });
    expect(triggerOf({ cron: "", intervalSecond: null })).toEqual({ kind: "once" });
    expect(() => cron("not a cron")).toThrow();
  });
});

describe("the base", () => {
  it("is the last slot, else start_time, else creation (whole seconds), raised to start_time", () => {
    const created = at("2026-03-01T10:00:00.400Z");
    const t = periodic(60);
    expect(iso(baseTime({ trigger: t, createdAt: created, noCatchup: false }))).toBe("2026-03-01T10:00:00.000Z");
    expect(iso(baseTime({ trigger: t, createdAt: created, startTime: at("2026-03-01T09:00:00Z"), noCatchup: false }))).toBe(
      "2026-03-01T09:00:00.000Z",
    );
    expect(
      iso(baseTime({ trigger: t, createdAt: created, startTime: at("2026-03-01T09:00:00Z"), lastScheduledAt: at("2026-03-01T11:00:00Z"), noCatchup: false })),
    ).toBe("2026-03-01T11:00:00.000Z");
    expect(
      iso(baseTime({ trigger: t, createdAt: created, startTime: at("2026-03-02T00:00:00Z"), lastScheduledAt: at("2026-03-01T11:00:00Z"), noCatchup: false })),
    ).toBe("2026-03-02T00:00:00.000Z");
  });
});

describe("periodic", () => {
  it("first fires at creation + interval, not at creation", () => {
    const j = job({ trigger: periodic(60) });
    expect(due(j, "2026-03-01T10:00:59Z")).toEqual({ due: [], next: "2026-03-01T10:01:00.000Z" });
    expect(due(j, "2026-03-01T10:01:00Z")).toEqual({ due: ["2026-03-01T10:01:00.000Z"], next: "2026-03-01T10:02:00.000Z" });
  });

  it("first fires at start + interval when start_time is set, even in the past", () => {
    const j = job({ trigger: periodic(3600), startTime: at("2026-03-01T07:30:00Z") });
    expect(due(j, "2026-03-01T10:00:00Z")).toEqual({
      due: ["2026-03-01T08:30:00.000Z", "2026-03-01T09:30:00.000Z"],
      next: "2026-03-01T10:30:00.000Z",
    });
  });

  it("waits for a future start_time", () => {
    const j = job({ trigger: periodic(60), startTime: at("2026-03-05T00:00:00Z") });
    expect(due(j, "2026-03-04T00:00:00Z")).toEqual({ due: [], next: "2026-03-05T00:01:00.000Z" });
  });

  it("continues from the last slot", () => {
    const j = job({ trigger: periodic(60), lastScheduledAt: at("2026-03-01T10:05:00Z") });
    expect(due(j, "2026-03-01T10:06:30Z")).toEqual({ due: ["2026-03-01T10:06:00.000Z"], next: "2026-03-01T10:07:00.000Z" });
  });

  it("catches up every missed slot, oldest first, at most maxCount, and says the next is due", () => {
    const j = job({ trigger: periodic(60) });
    expect(due(j, "2026-03-01T10:10:00Z", 3)).toEqual({
      due: ["2026-03-01T10:01:00.000Z", "2026-03-01T10:02:00.000Z", "2026-03-01T10:03:00.000Z"],
      next: "2026-03-01T10:04:00.000Z",
    });
    expect(due(j, "2026-03-01T10:10:00Z", 0)).toEqual({ due: [], next: "2026-03-01T10:01:00.000Z" });
  });

  it("with no_catchup fires only the latest missed slot", () => {
    const j = job({ trigger: periodic(60), noCatchup: true });
    expect(due(j, "2026-03-01T10:10:30Z", 3)).toEqual({ due: ["2026-03-01T10:10:00.000Z"], next: "2026-03-01T10:11:00.000Z" });
  });

  it("never fires after end_time; a slot at end_time fires", () => {
    const j = job({ trigger: periodic(60), endTime: at("2026-03-01T10:03:00Z") });
    expect(due(j, "2026-03-01T11:00:00Z")).toEqual({
      due: ["2026-03-01T10:01:00.000Z", "2026-03-01T10:02:00.000Z", "2026-03-01T10:03:00.000Z"],
      next: undefined,
    });
    const ended = job({ trigger: periodic(60), endTime: at("2026-03-01T10:03:00Z"), lastScheduledAt: at("2026-03-01T10:03:00Z") });
    expect(due(ended, "2026-03-01T11:00:00Z")).toEqual({ due: [], next: undefined });
    const noCatchup = job({ trigger: periodic(60), endTime: at("2026-03-01T10:03:30Z"), noCatchup: true });
    expect(due(noCatchup, "2026-03-01T11:00:00Z")).toEqual({ due: ["2026-03-01T10:03:00.000Z"], next: undefined });
  });

  it("a job started a year ago: 365 daily slots in O(count), the latest in O(1)", () => {
    const now = at("2026-03-01T12:00:00Z");
    const j = job({ trigger: periodic(86_400), startTime: now - 365 * day - hour, createdAt: now });
    expect(fireTimes(j, now, 1000).due).toHaveLength(365);
    expect(fireTimes(j, now, 10).due).toHaveLength(10);
    expect(fireTimes({ ...j, noCatchup: true }, now, 10)).toEqual({ due: [now - hour], next: now - hour + day });
  });
});

describe("cron", () => {
  it("fires on the first match strictly after the base", () => {
    const j = job({ trigger: cron("0 0 * * * *"), createdAt: at("2026-03-01T10:00:00Z") });
    expect(due(j, "2026-03-01T10:59:59Z")).toEqual({ due: [], next: "2026-03-01T11:00:00.000Z" });
    expect(due(j, "2026-03-01T11:00:00Z")).toEqual({ due: ["2026-03-01T11:00:00.000Z"], next: "2026-03-01T12:00:00.000Z" });
  });

  it("counts from start_time when set, and raises the base to it", () => {
    const j = job({ trigger: cron("@daily"), startTime: at("2026-02-26T12:00:00Z") });
    expect(due(j, "2026-03-01T10:00:00Z")).toEqual({
      due: ["2026-02-27T00:00:00.000Z", "2026-02-28T00:00:00.000Z", "2026-03-01T00:00:00.000Z"],
      next: "2026-03-02T00:00:00.000Z",
    });
    const raised = job({ trigger: cron("@daily"), startTime: at("2026-03-03T12:00:00Z"), lastScheduledAt: at("2026-03-01T00:00:00Z") });
    expect(due(raised, "2026-03-03T12:00:00Z")).toEqual({ due: [], next: "2026-03-04T00:00:00.000Z" });
  });

  it("stops at end_time", () => {
    const j = job({ trigger: cron("0 */10 * * * *"), endTime: at("2026-03-01T10:25:00Z") });
    expect(due(j, "2026-03-01T12:00:00Z")).toEqual({
      due: ["2026-03-01T10:10:00.000Z", "2026-03-01T10:20:00.000Z"],
      next: undefined,
    });
  });

  it("5 fields are minute-first, 6 fields seconds-first", () => {
    const five = job({ trigger: cron("*/5 * * * *"), createdAt: at("2026-03-01T10:00:00Z") });
    expect(due(five, "2026-03-01T10:05:00Z").due).toEqual(["2026-03-01T10:05:00.000Z"]);
    const six = job({ trigger: cron("*/5 * * * * *"), createdAt: at("2026-03-01T10:00:00Z") });
    expect(due(six, "2026-03-01T10:00:10Z").due).toEqual(["2026-03-01T10:00:05.000Z", "2026-03-01T10:00:10.000Z"]);
  });

  it("catch-up of a daily job started a year ago is bounded by maxCount, not by the year", () => {
    const now = at("2026-03-01T12:00:00Z");
    const { trigger, calls } = counted("0 0 0 * * *");
    const j = job({ trigger, startTime: now - 365 * day, createdAt: now });
    const times = fireTimes(j, now, 10);
    expect(times.due).toHaveLength(10);
    expect(iso(times.due[0])).toBe("2025-03-02T00:00:00.000Z");
    expect(iso(times.next)).toBe("2025-03-12T00:00:00.000Z");
    expect(calls()).toBeLessThanOrEqual(11);
  });

  it("no_catchup finds the latest slot of a year-old daily job (and of a every-second job) in few calls", () => {
    const now = at("2026-03-01T12:00:00Z");
    const daily = counted("0 0 0 * * *");
    const j = job({ trigger: daily.trigger, startTime: now - 365 * day, createdAt: now, noCatchup: true });
    expect(due(j, "2026-03-01T12:00:00Z")).toEqual({ due: ["2026-03-01T00:00:00.000Z"], next: "2026-03-02T00:00:00.000Z" });
    expect(daily.calls()).toBeLessThan(60);

    const everySecond = counted("* * * * * *");
    const k = job({ trigger: everySecond.trigger, startTime: now - 365 * day, createdAt: now, noCatchup: true });
    expect(due(k, "2026-03-01T12:00:00.500Z")).toEqual({ due: ["2026-03-01T12:00:00.000Z"], next: "2026-03-01T12:00:01.000Z" });
    expect(everySecond.calls()).toBeLessThan(60);
  });

  it("the bisection agrees with enumeration", () => {
    const from = at("2026-01-01T00:00:00Z");
    const cases: [string, number[]][] = [
      ["0 0 9-17 * * 1-5", [from + 3 * hour, from + 2 * day + 5 * minute, from + 45 * day]],
      ["*/7 * * * * *", [from + 17 * second, from + 3 * hour + 17 * second]],
      ["0 30 14 * * ?", [from + 2 * day + 5 * minute, from + 45 * day]],
      ["0 0 0 1 * *", [from + 45 * day, from + 300 * day]],
      ["0 * 0-11 * * *", [from + 11 * hour + 59 * minute, from + 2 * day + 13 * hour]],
      ["@hourly", [from + 5 * hour, from + 20 * day + 30 * minute]],
    ];
    for (const [expression, horizons] of cases) {
      const schedule = parseCron(expression);
      for (const horizon of horizons) {
        let latest: number | undefined;
        for (let t = schedule.nextAfter(from); t !== undefined && t <= horizon; t = schedule.nextAfter(t)) latest = t;
        if (latest === undefined) continue;
        expect(iso(latestSlot(schedule, from, horizon)), `${expression} until ${iso(horizon)}`).toBe(iso(latest));
      }
    }
  });
});

describe("one-off jobs (no trigger)", () => {
  it("fire once, at creation", () => {
    const j = job({ trigger: { kind: "once" } });
    expect(due(j, "2026-03-01T10:00:00.400Z")).toEqual({ due: ["2026-03-01T10:00:00.000Z"], next: undefined });
    expect(due(j, "2026-03-01T09:00:00Z")).toEqual({ due: [], next: "2026-03-01T10:00:00.000Z" });
    expect(due({ ...j, lastScheduledAt: at("2026-03-01T10:00:00Z") }, "2026-03-02T00:00:00Z")).toEqual({ due: [], next: undefined });
  });
});
