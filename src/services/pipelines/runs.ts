// Runs: creation from a pipeline spec, the lifecycle calls (archive, terminate, delete), metrics
// and artifacts. Execution is the engine's; this module records what a run is and asks for.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ResourceType } from "../../../gen/proto/kfp/resource_reference_pb.js";
import {
  RunSchema,
  Run_StorageState,
  type Run,
  type RunMetric,
  type RunService,
} from "../../../gen/proto/kfp/run_pb.js";
import type { ArtifactStore } from "../../artifacts/store.js";
import type { WorkflowEngine } from "../../engine/engine.js";
import { failedPrecondition, invalidArgument, notFound } from "../../errors.js";
import type { PipelineStore } from "../../store/pipelines/pipeline-store.js";
import type { RunMetricRow, RunRow, RunStore } from "../../store/pipelines/run-store.js";
import type { Experiments } from "./experiments.js";
import type { Lists } from "./lists.js";
import { pipelineSpecOf, resolvePipelineSpec, type ResolvedPipelineSpec } from "./pipeline-spec.js";
import { parseReferences, referencesOf, type Owners } from "./references.js";
import { isFinished, RunStatus, terminableStatuses } from "./run-status.js";
import { recordMetric } from "./run-metrics.js";
import { runtimeWorkflow } from "./runtime-workflow.js";
import { nowMillis, toTimestamp } from "./timestamps.js";
import type { Workflow } from "./workflow.js";

export interface NewRun {
  name: string;
  description: string;
  spec: ResolvedPipelineSpec;
  /** Every run belongs to an experiment (the Default one when none was named). */
  owners: Owners & { experimentId: string };
  /** The job's slot for runs a job creates; the creation time otherwise. */
  scheduledAt?: bigint;
}

export function runMessage(row: Omit<RunRow, "runtimeManifest">, metrics: readonly RunMetricRow[] = []): Run {
  return create(RunSchema, {
    id: row.id,
    name: row.name,
    storageState: row.storageState,
    description: row.description,
    pipelineSpec: pipelineSpecOf(row),
    resourceReferences: referencesOf({ experimentId: row.experimentId, ...(row.jobId !== null && { jobId: row.jobId }) }),
    createdAt: toTimestamp(row.createdAt),
    scheduledAt: toTimestamp(row.scheduledAt),
    ...(row.finishedAt !== null && { finishedAt: toTimestamp(row.finishedAt) }),
    status: row.status,
    error: row.error,
    metrics: metrics.map((m) => ({
      name: m.name,
      nodeId: m.nodeId,
      value: { case: "numberValue" as const, value: m.numberValue },
      format: m.format,
    })),
  });
}

/** The stored form of a new run: Pending, with its runtime workflow named and given the run's id. */
export function newRunRow(run: NewRun, now: bigint = nowMillis(), id: string = randomUUID()): RunRow {
  return {
    id,
    name: run.name,
    description: run.description,
    storageState: Run_StorageState.STORAGESTATE_AVAILABLE,
    experimentId: run.owners.experimentId,
    jobId: run.owners.jobId ?? null,
    pipelineId: run.spec.pipelineId ?? null,
    workflowManifest: run.spec.workflowManifest,
    parameters: JSON.stringify(run.spec.parameters),
    runtimeManifest: JSON.stringify(runtimeWorkflow(run.spec.workflow, id, now)),
    status: RunStatus.pending,
    error: "",
    createdAt: now,
    scheduledAt: run.scheduledAt ?? now,
    finishedAt: null,
  };
}

interface WorkflowNodeArtifact {
  name?: string;
  key?: string;
  s3?: { key?: string };
}

/** The storage key of a node's output artifact in a runtime manifest (the last match wins). */
function artifactKey(runtimeManifest: string, nodeId: string, artifactName: string): string | undefined {
  const workflow = JSON.parse(runtimeManifest) as { status?: { nodes?: Record<string, { outputs?: { artifacts?: WorkflowNodeArtifact[] } }> } };
  const artifacts = workflow.status?.nodes?.[nodeId]?.outputs?.artifacts ?? [];
  return artifacts
    .filter((a) => a.name === artifactName)
    .map((a) => a.s3?.key ?? a.key)
    .filter((key): key is string => !!key)
    .at(-1);
}

export class Runs {
  constructor(
    private readonly store: RunStore,
    private readonly pipelines: PipelineStore,
    private readonly experiments: Experiments,
    private readonly artifacts: ArtifactStore,
    private readonly engine: WorkflowEngine,
  ) {}

  /** Validates a CreateRun request into what `create` needs, checking references first. */
  async prepare(run: Run | undefined): Promise<NewRun> {
    if (!run) throw invalidArgument("the request has no run");
    if (run.name === "") throw invalidArgument("The run name is empty. Please specify a valid name.");
    const owners = parseReferences(run.resourceReferences, [ResourceType.EXPERIMENT, ResourceType.JOB]);
    if (owners.experimentId !== undefined) await this.experiments.get(owners.experimentId);
    const spec = await resolvePipelineSpec(run.pipelineSpec, this.pipelines);
    const experimentId = owners.experimentId ?? (await this.experiments.defaultId());
    return { name: run.name, description: run.description, spec, owners: { ...owners, experimentId } };
  }

  async create(run: NewRun): Promise<RunRow> {
    return this.launch(await this.store.insert(newRunRow(run)));
  }

  /** Hands a stored run to the engine. */
  async launch(row: RunRow): Promise<RunRow> {
    await this.engine.submit(row.id, JSON.parse(row.runtimeManifest) as Workflow);
    return row;
  }

  async get(id: string): Promise<RunRow> {
    const run = await this.store.byId(id);
    if (!run) throw notFound(`Run ${id} not found.`);
    return run;
  }

  metricsOf(runIds: readonly string[]): Promise<Map<string, RunMetricRow[]>> {
    return this.store.metricsOf(runIds);
  }

  async setStorageState(id: string, state: Run_StorageState): Promise<void> {
    if (!(await this.store.setStorageState(id, state))) throw notFound(`Run ${id} not found.`);
  }

  /** Stops the run's processes if it is executing, then deletes it with its metrics. */
  async delete(id: string): Promise<void> {
    await this.engine.terminate(id);
    if (!(await this.store.delete(id))) throw notFound(`Run ${id} not found.`);
  }

  /** Stops a pending or running run; the engine ends it as Failed. */
  async terminate(id: string): Promise<void> {
    if (await this.store.transitionStatus(id, terminableStatuses, RunStatus.terminating)) {
      // Returns once this process's engine has killed the run; an engine elsewhere notices the status.
      await this.engine.terminate(id);
      return;
    }
    const run = await this.get(id);
    if (isFinished(run.status)) {
      throw failedPrecondition(`Run ${id} has already finished (status ${run.status}); it cannot be terminated.`);
    }
    // Already terminating: nothing more to do.
  }

  async reportMetrics(runId: string, metrics: readonly RunMetric[]) {
    if (!(await this.store.exists(runId))) throw notFound(`Run ${runId} not found.`);
    const results = [];
    for (const metric of metrics) {
      const value = metric.value.case === "numberValue" ? metric.value.value : 0;
      const outcome = await recordMetric(this.store, runId, { name: metric.name, nodeId: metric.nodeId, numberValue: value, format: metric.format });
      results.push({ metricName: metric.name, metricNodeId: metric.nodeId, ...outcome });
    }
    return results;
  }

  async readArtifact(runId: string, nodeId: string, artifactName: string): Promise<Uint8Array> {
    const run = await this.get(runId);
    const what = `artifact runs/${runId}/nodes/${nodeId}/artifacts/${artifactName}`;
    const key = artifactKey(run.runtimeManifest, nodeId, artifactName);
    if (key === undefined) throw notFound(`${what} not found.`);
    const data = await this.artifacts.get(key);
    if (!data) throw notFound(`${what} is not stored.`);
    return data;
  }
}

export function runService(runs: Runs, lists: Lists): ServiceImpl<typeof RunService> {
  const detail = async (row: RunRow) => ({
    run: runMessage(row, (await runs.metricsOf([row.id])).get(row.id)),
    pipelineRuntime: { workflowManifest: row.runtimeManifest },
  });
  return {
    async createRun(req) {
      return detail(await runs.create(await runs.prepare(req.run)));
    },
    async getRun(req) {
      return detail(await runs.get(req.runId));
    },
    async listRuns(req) {
      const page = await lists.runs(req);
      const metrics = await runs.metricsOf(page.rows.map((r) => r.id));
      return {
        runs: page.rows.map((row) => runMessage(row, metrics.get(row.id))),
        totalSize: page.totalSize,
        nextPageToken: page.nextPageToken,
      };
    },
    async archiveRun(req) {
      await runs.setStorageState(req.id, Run_StorageState.STORAGESTATE_ARCHIVED);
      return {};
    },
    async unarchiveRun(req) {
      await runs.setStorageState(req.id, Run_StorageState.STORAGESTATE_AVAILABLE);
      return {};
    },
    async deleteRun(req) {
      await runs.delete(req.id);
      return {};
    },
    async reportRunMetrics(req) {
      return { results: await runs.reportMetrics(req.runId, req.metrics) };
    },
    async readArtifact(req) {
      return { data: await runs.readArtifact(req.runId, req.nodeId, req.artifactName) };
    },
    async terminateRun(req) {
      await runs.terminate(req.runId);
      return {};
    },
  };
}
