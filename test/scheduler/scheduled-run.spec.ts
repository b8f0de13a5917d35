// Run names, parameter macros and Go time layouts.
import { describe, expect, it } from "vitest";
import { formatGoTime } from "../../src/scheduler/go-time-layout.js";
import {
  cachingRunFactory,
  expandParameterMacros,
  scheduledRunName,
  scheduledRunRow,
} from "../../src/scheduler/scheduled-run.js";
import { fnv1a32 } from "../../src/fnv1a.js";
import type { JobRow } from "../../src/store/pipelines/job-store.js";
import { workflowManifest } from "./helpers.js";

const at = (iso: string) => Date.parse(iso);

describe("run names", () => {
  it("FNV-32a matches the reference vectors", () => {
    expect(fnv1a32("")).toBe(0x811c9dc5);
    expect(fnv1a32("a")).toBe(0xe40c292c);
    expect(fnv1a32("foobar")).toBe(0xbf9cf968);
  });

  it("are <job name>-<index>-<FNV-32a of '<job name>-<index>'> in decimal", () => {
    expect(scheduledRunName("nightly", 1)).toBe(`nightly-1-${fnv1a32("nightly-1")}`);
    expect(scheduledRunName("nightly", 12)).toMatch(/^nightly-12-\d+$/);
    expect(scheduledRunName("", 3)).toBe(`job-3-${fnv1a32("job-3")}`);
  });
});

describe("Go time layouts (UTC)", () => {
  const t = at("2026-03-07T04:05:06.789Z"); // a Saturday, day 66 of the year
  it.each([
    ["20060102150405", "20260307040506"],
    ["2006-01-02", "2026-03-07"],
    ["2006-01-02T15:04:05Z07:00", "2026-03-07T04:05:06Z"],
    ["2006-01-02T15:04:05-07:00", "2026-03-07T04:05:06+00:00"],
    ["Mon Jan _2 15:04:05 MST 2006", "Sat Mar  7 04:05:06 UTC 2026"],
    ["Monday, January 2, 2006 3:04:05 PM", "Saturday, March 7, 2026 4:05:06 AM"],
    ["06/1/2 03:4:5 pm", "26/3/7 04:5:6 am"],
    ["15:04:05.000", "04:05:06.789"],
    ["15:04:05.000000", "04:05:06.789000"],
    ["15:04:05.9", "04:05:06.7"],
    ["15:04:05,999", "04:05:06,789"],
    ["002 __2", "066  66"],
    ["-0700 Z0700 -07", "+0000 Z +00"],
    ["_2006", "_2026"],
    ["year 2006 (literal text)", "year 2026 (literal text)"],
  ])("%s → %s", (layout, expected) => {
    expect(formatGoTime(t, layout)).toBe(expected);
  });

  it("drops the dot of .999 when the fraction is zero", () => {
    expect(formatGoTime(at("2026-03-07T04:05:06Z"), "05.999")).toBe("06");
    expect(formatGoTime(at("2026-03-07T16:05:06Z"), "3PM")).toBe("4PM");
  });
});

describe("parameter macros", () => {
  const firing = { scheduledAt: at("2026-03-07T04:05:00Z"), index: 7, now: at("2026-03-07T04:05:01.250Z") };
  it.each([
    ["[[ScheduledTime]]", "20260307040500"],
    ["[[CurrentTime]]", "20260307040501"],
    ["[[Index]]", "7"],
    ["run-[[Index]]-at-[[ScheduledTime.2006-01-02]]", "run-7-at-2026-03-07"],
    ["[[CurrentTime.15:04:05.000]]", "04:05:01.000"],
    ["[[Unknown]] and [[ScheduledTime", "[[Unknown]] and [[ScheduledTime"],
    ["no macros", "no macros"],
  ])("%s → %s", (value, expected) => {
    expect(expandParameterMacros(value, firing)).toBe(expected);
  });
});

describe("the run row", () => {
  const job: JobRow = {
    id: "job-id",
    name: "nightly",
    description: "d",
    experimentId: "experiment-id",
    pipelineId: "pipeline-id",
    workflowManifest,
    parameters: JSON.stringify([{ name: "when", value: "[[ScheduledTime]]" }]),
    maxConcurrency: 1,
    cron: null,
    intervalSecond: 60n,
    startTime: null,
    endTime: null,
    enabled: true,
    noCatchup: false,
    status: "Enabled",
    createdAt: 0n,
    updatedAt: 0n,
    firedCount: 0,
    lastScheduledAt: null,
  };
  const firing = { scheduledAt: at("2026-03-07T04:05:00Z"), index: 1, now: at("2026-03-07T04:05:00.300Z") };

  it("is named, owned, scheduled and parameterised", () => {
    const row = scheduledRunRow(job, firing);
    expect(row).toMatchObject({
      name: scheduledRunName("nightly", 1),
      description: "",
      experimentId: "experiment-id",
      jobId: "job-id",
      pipelineId: "pipeline-id",
      workflowManifest,
      parameters: JSON.stringify([{ name: "when", value: "20260307040500" }]),
      status: "Pending",
      scheduledAt: BigInt(firing.scheduledAt),
      createdAt: BigInt(firing.now),
      finishedAt: null,
    });
    const runtime = JSON.parse(row.runtimeManifest);
    expect(runtime.spec.arguments.parameters).toEqual([
      { name: "when", value: "20260307040500" },
      { name: "n", value: "0" },
    ]);
    expect(runtime.metadata.uid).toBe(row.id);
  });

  it("the caching factory parses a job's manifest once and gives the same rows", () => {
    const factory = cachingRunFactory(2);
    const a = factory(job, firing);
    const b = factory(job, { ...firing, index: 2, scheduledAt: firing.scheduledAt + 60_000 });
    expect(a.parameters).toBe(JSON.stringify([{ name: "when", value: "20260307040500" }]));
    expect(b.parameters).toBe(JSON.stringify([{ name: "when", value: "20260307040600" }]));
    expect(JSON.parse(a.runtimeManifest).spec.arguments.parameters[0].value).toBe("20260307040500");
    for (const id of ["x", "y", "z"]) expect(factory({ ...job, id }, firing).jobId).toBe(id);
  });
});
