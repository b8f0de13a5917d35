// The engine boundary: the run service hands workflows to an engine and hears back from it.
// The local engine (src/engine/local/) is the first implementation; an Argo-on-Kubernetes one
// can implement the same interface.
import type { Workflow } from "../services/pipelines/workflow.js";

/** A run's workflow as the engine reports it: Argo-shaped, with `status` filled in. */
export interface WorkflowUpdate {
  runId: string;
  workflow: Workflow;
  /** The workflow phase: Pending, Running, Succeeded, Failed or Error. */
  phase: string;
  /** Epoch ms, once the workflow has finished. */
  finishedAt?: number;
}

/** A metric a step reported through its mlpipeline-metrics output. */
export interface StepMetric {
  name: string;
  numberValue: number;
  format: string;
}

/** Where an engine reports progress; the run service persists it. */
export interface EngineListener {
  workflowUpdated(update: WorkflowUpdate): Promise<void>;
  metricsReported(runId: string, nodeId: string, metrics: StepMetric[]): Promise<void>;
}

export interface WorkflowEngine {
  /** Starts executing a run's workflow (the runtime manifest of the run). */
  submit(runId: string, workflow: Workflow): Promise<void>;
  /** Stops a run: every process is killed; the run ends Failed, killed nodes say `terminated`. */
  terminate(runId: string): Promise<void>;
  /** After a restart: runs that were in flight are resumed or ended with an Error. */
  recover(): Promise<void>;
  /** Stops every run this process executes (on shutdown); they are recovered on the next start. */
  close(): Promise<void>;
}
