// Persists what the engine reports about runs (status, runtime workflow, metrics, and with a
// lineage the steps in the metadata service) and tells it which runs are unfinished or asked to stop.
import { RunMetric_Format } from "../../../gen/proto/kfp/run_pb.js";
import type { EngineListener, StepMetric, StepReport, WorkflowUpdate } from "../../engine/engine.js";
import type { RunLedger } from "../../engine/local/local-engine.js";
import type { RunStore } from "../../store/pipelines/run-store.js";
import { recordMetric } from "./run-metrics.js";
import { RunStatus } from "./run-status.js";
import type { StepLineage } from "./step-lineage.js";
import type { Workflow } from "./workflow.js";

const finalPhases = new Set<string>([RunStatus.succeeded, RunStatus.failed, RunStatus.error]);

export class RunRecorder implements EngineListener, RunLedger {
  constructor(
    private readonly store: RunStore,
    private readonly lineage?: StepLineage,
  ) {}

  async workflowUpdated(update: WorkflowUpdate): Promise<void> {
    const final = finalPhases.has(update.phase);
    // The final update comes after every step's report.
    if (final) this.lineage?.forget(update.runId);
    await this.store.recordProgress(update.runId, {
      runtimeManifest: JSON.stringify(update.workflow),
      status: update.phase,
      final,
      ...(update.finishedAt !== undefined && { finishedAt: BigInt(update.finishedAt) }),
    });
  }

  /**
   * Metrics from a step's mlpipeline-metrics file. As with KFP's persistence agent, invalid or
   * repeated ones are dropped; they are visible in the step's artifact.
   */
  async metricsReported(runId: string, nodeId: string, metrics: StepMetric[]): Promise<void> {
    for (const metric of metrics) {
      const format = RunMetric_Format[metric.format as keyof typeof RunMetric_Format] ?? RunMetric_Format.UNSPECIFIED;
      await recordMetric(this.store, runId, { name: metric.name, nodeId, numberValue: metric.numberValue, format });
    }
  }

  /** Without a lineage (no metadata service), steps are only in the run's workflow. */
  async stepFinished(runId: string, step: StepReport): Promise<void> {
    await this.lineage?.record(runId, step);
  }

  async unfinished(): Promise<Array<{ runId: string; status: string; workflow: Workflow }>> {
    const rows = await this.store.withStatus([RunStatus.pending, RunStatus.running, RunStatus.terminating]);
    return rows.map((r) => ({ runId: r.id, status: r.status, workflow: JSON.parse(r.runtimeManifest) as Workflow }));
  }

  terminating(runIds: string[]): Promise<string[]> {
    return this.store.idsWithStatus(runIds, RunStatus.terminating);
  }
}
