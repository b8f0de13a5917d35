// The run a job creates for one of its slots: named `<job name>-<index>-<hash>` as KFP's
// controller named its workflows, owned by the job's experiment and created by the job, its
// parameter values with the `[[ScheduledTime]]`, `[[CurrentTime]]` and `[[Index]]` macros
// expanded and applied to the job's workflow. Pure apart from the run id and the workflow's
// random name suffix (both from newRunRow).
import { fnv1a32 } from "../fnv1a.js";
import type { ParameterValue } from "../services/pipelines/pipeline-spec.js";
import { newRunRow } from "../services/pipelines/runs.js";
import { parseWorkflow, withParameterValues, type Workflow } from "../services/pipelines/workflow.js";
import type { JobRow } from "../store/pipelines/job-store.js";
import type { RunRow } from "../store/pipelines/run-store.js";
import { formatGoTime } from "./go-time-layout.js";

/** One firing of a job: the slot, the run's index (1 for the job's first run) and the time it fires. */
export interface SlotFiring {
  /** The slot, epoch ms: the run's scheduled_at. */
  scheduledAt: number;
  /** The job's fired count once this slot is claimed: 1, 2, … */
  index: number;
  /** When the run is created, epoch ms: its created_at and `[[CurrentTime]]`. */
  now: number;
}

/** Builds the row of the run a job creates for a slot (called before the slot is claimed). */
export type CreateRunForSlot = (job: JobRow, firing: SlotFiring) => RunRow | Promise<RunRow>;

/** `<job name>-<index>-<FNV-32a of "<job name>-<index>", decimal>`; a nameless job is called `job`. */
export function scheduledRunName(jobName: string, index: number): string {
  const name = jobName === "" ? "job" : jobName;
  return `${name}-${index}-${fnv1a32(`${name}-${index}`)}`;
}

const defaultTimeLayout = "20060102150405";
const wholeSecond = (ms: number) => Math.floor(ms / 1000) * 1000;

/**
 * Expands `[[ScheduledTime]]`, `[[CurrentTime]]` (YYYYMMDDhhmmss, UTC), `[[Index]]` and the
 * `[[ScheduledTime.<Go layout>]]` / `[[CurrentTime.<Go layout>]]` forms; any other `[[…]]` is
 * left as it is. Times are in whole seconds, as KFP passed epoch seconds.
 */
export function expandParameterMacros(value: string, firing: SlotFiring): string {
  return value.replace(/\[\[(.*?)\]\]/g, (match, expression: string) => {
    if (expression === "Index") return String(firing.index);
    for (const [name, time] of [
      ["ScheduledTime", firing.scheduledAt],
      ["CurrentTime", firing.now],
    ] as const) {
      if (expression === name) return formatGoTime(wholeSecond(time), defaultTimeLayout);
      if (expression.startsWith(`${name}.`)) return formatGoTime(wholeSecond(time), expression.slice(name.length + 1));
    }
    return match;
  });
}

/** The row of the run `job` creates for `firing`, its workflow parsed from the job's manifest. */
export function scheduledRunRow(job: JobRow, firing: SlotFiring, workflow: Workflow = parseWorkflow(job.workflowManifest)): RunRow {
  const parameters = (JSON.parse(job.parameters) as ParameterValue[]).map(({ name, value }) => ({
    name,
    value: typeof value === "string" ? expandParameterMacros(value, firing) : value,
  }));
  return newRunRow(
    {
      name: scheduledRunName(job.name, firing.index),
      description: "",
      spec: {
        ...(job.pipelineId !== null && { pipelineId: job.pipelineId }),
        workflowManifest: job.workflowManifest,
        parameters,
        workflow: withParameterValues(workflow, parameters),
      },
      owners: { experimentId: job.experimentId, jobId: job.id },
      scheduledAt: BigInt(firing.scheduledAt),
    },
    BigInt(firing.now),
  );
}

/**
 * `scheduledRunRow` with each job's parsed workflow kept (a job's manifest never changes), so
 * that a job firing every second does not parse its manifest every second.
 */
export function cachingRunFactory(limit = 5000): (job: JobRow, firing: SlotFiring) => RunRow {
  const workflows = new Map<string, { manifest: string; workflow: Workflow }>();
  return (job, firing) => {
    let entry = workflows.get(job.id);
    if (entry?.manifest !== job.workflowManifest) {
      entry = { manifest: job.workflowManifest, workflow: parseWorkflow(job.workflowManifest) };
      if (workflows.size >= limit) workflows.delete(workflows.keys().next().value!);
    }
    // Re-inserted so that the least recently fired job is the first to go.
    workflows.delete(job.id);
    workflows.set(job.id, entry);
    return scheduledRunRow(job, firing, entry.workflow);
  };
}
