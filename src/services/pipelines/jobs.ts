// api.JobService: validated job definitions. Firing them on schedule is the scheduler's work.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { JobSchema, Job_Mode, type Job, type JobService, type Trigger } from "../../../gen/proto/kfp/job_pb.js";
import { ResourceType } from "../../../gen/proto/kfp/resource_reference_pb.js";
import { invalidArgument, notFound } from "../../errors.js";
import { parseCron } from "../../scheduler/cron.js";
import type { JobRow, JobStore } from "../../store/pipelines/job-store.js";
import type { PipelineStore } from "../../store/pipelines/pipeline-store.js";
import type { Experiments } from "./experiments.js";
import type { Lists } from "./lists.js";
import { pipelineSpecOf, resolvePipelineSpec } from "./pipeline-spec.js";
import { parseReferences, referencesOf } from "./references.js";
import { nowMillis, toMillis, toTimestamp } from "./timestamps.js";

export const JobStatus = { enabled: "Enabled", disabled: "Disabled", succeeded: "Succeeded" } as const;

const maxConcurrencyLimit = 10;

interface StoredTrigger {
  cron: string | null;
  intervalSecond: bigint | null;
  startTime: bigint | null;
  endTime: bigint | null;
}

function storedTrigger(trigger: Trigger | undefined): StoredTrigger {
  const none = { cron: null, intervalSecond: null, startTime: null, endTime: null };
  const schedule = trigger?.trigger;
  if (!schedule?.case) return none;
  const startTime = toMillis(schedule.value.startTime) ?? null;
  const endTime = toMillis(schedule.value.endTime) ?? null;
  if (startTime !== null && endTime !== null && endTime < startTime) {
    throw invalidArgument("the trigger's end_time is before its start_time");
  }
  if (schedule.case === "cronSchedule") {
    parseCron(schedule.value.cron);
    return { ...none, cron: schedule.value.cron, startTime, endTime };
  }
  if (schedule.value.intervalSecond < 1n) {
    throw invalidArgument(`periodic_schedule.interval_second must be at least 1, got ${schedule.value.intervalSecond}`);
  }
  return { ...none, intervalSecond: schedule.value.intervalSecond, startTime, endTime };
}

function triggerMessage(row: JobRow) {
  const times = {
    ...(row.startTime !== null && { startTime: toTimestamp(row.startTime) }),
    ...(row.endTime !== null && { endTime: toTimestamp(row.endTime) }),
  };
  if (row.cron !== null) return { trigger: { case: "cronSchedule" as const, value: { ...times, cron: row.cron } } };
  if (row.intervalSecond !== null) {
    return { trigger: { case: "periodicSchedule" as const, value: { ...times, intervalSecond: row.intervalSecond } } };
  }
  return {};
}

export function jobMessage(row: JobRow): Job {
  return create(JobSchema, {
    id: row.id,
    name: row.name,
    description: row.description,
    pipelineSpec: pipelineSpecOf(row),
    resourceReferences: referencesOf({ experimentId: row.experimentId }),
    maxConcurrency: BigInt(row.maxConcurrency),
    trigger: triggerMessage(row),
    mode: row.enabled ? Job_Mode.ENABLED : Job_Mode.DISABLED,
    createdAt: toTimestamp(row.createdAt),
    updatedAt: toTimestamp(row.updatedAt),
    status: row.status,
    enabled: row.enabled,
    noCatchup: row.noCatchup,
  });
}

/** `mode` decides when set; otherwise `enabled` when given; otherwise the job is enabled. */
function isEnabled(job: Job): boolean {
  if (job.mode !== Job_Mode.UNKNOWN_MODE) return job.mode === Job_Mode.ENABLED;
  return job.enabled ?? true;
}

export class Jobs {
  private scheduleChanged: () => void = () => {};

  constructor(
    private readonly store: JobStore,
    private readonly pipelines: PipelineStore,
    private readonly experiments: Experiments,
  ) {}

  async create(job: Job | undefined): Promise<JobRow> {
    if (!job) throw invalidArgument("the request has no job");
    const owners = parseReferences(job.resourceReferences, [ResourceType.EXPERIMENT]);
    if (owners.experimentId !== undefined) await this.experiments.get(owners.experimentId);
    const spec = await resolvePipelineSpec(job.pipelineSpec, this.pipelines);
    const maxConcurrency = job.maxConcurrency === 0n ? 1n : job.maxConcurrency;
    if (maxConcurrency < 1n || maxConcurrency > BigInt(maxConcurrencyLimit)) {
      throw invalidArgument(`max_concurrency must be between 1 and ${maxConcurrencyLimit}, got ${job.maxConcurrency}`);
    }
    const trigger = storedTrigger(job.trigger);
    const enabled = isEnabled(job);
    const now = nowMillis();
    const row = await this.store.insert({
      id: randomUUID(),
      name: job.name,
      description: job.description,
      experimentId: owners.experimentId ?? (await this.experiments.defaultId()),
      pipelineId: spec.pipelineId ?? null,
      workflowManifest: spec.workflowManifest,
      parameters: JSON.stringify(spec.parameters),
      maxConcurrency: Number(maxConcurrency),
      ...trigger,
      enabled,
      noCatchup: job.noCatchup,
      status: enabled ? JobStatus.enabled : JobStatus.disabled,
      createdAt: now,
      updatedAt: now,
      firedCount: 0,
      lastScheduledAt: null,
    });
    this.scheduleChanged();
    return row;
  }

  /** Called after a job is created or enabled, so the scheduler looks at it at once. */
  onScheduleChange(listener: () => void): void {
    this.scheduleChanged = listener;
  }

  async get(id: string): Promise<JobRow> {
    const job = await this.store.byId(id);
    if (!job) throw notFound(`Job ${id} not found.`);
    return job;
  }

  async setEnabled(id: string, enabled: boolean): Promise<void> {
    const status = enabled ? JobStatus.enabled : JobStatus.disabled;
    if (!(await this.store.setEnabled(id, enabled, status, nowMillis()))) throw notFound(`Job ${id} not found.`);
    if (enabled) this.scheduleChanged();
  }

  async delete(id: string): Promise<void> {
    if (!(await this.store.delete(id))) throw notFound(`Job ${id} not found.`);
  }
}

export function jobService(jobs: Jobs, lists: Lists): ServiceImpl<typeof JobService> {
  return {
    async createJob(req) {
      return jobMessage(await jobs.create(req.job));
    },
    async getJob(req) {
      return jobMessage(await jobs.get(req.id));
    },
    async listJobs(req) {
      const page = await lists.jobs(req);
      return { jobs: page.rows.map(jobMessage), totalSize: page.totalSize, nextPageToken: page.nextPageToken };
    },
    async enableJob(req) {
      await jobs.setEnabled(req.id, true);
      return {};
    },
    async disableJob(req) {
      await jobs.setEnabled(req.id, false);
      return {};
    },
    async deleteJob(req) {
      await jobs.delete(req.id);
      return {};
    },
  };
}
