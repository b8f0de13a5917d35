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

/** An artifact in the artifact store, as a step produced or received it. */
export interface StepArtifact {
  /** The output's name (`main-logs` for the step's log), or for an input the step's input name. */
  name: string;
  /** The artifact store key of its archive. */
  key: string;
  /** Where the step wrote or saw it, in its own filesystem. */
  path?: string;
}

/** A finished step (an Argo Pod node) as the engine reports it. */
export interface StepReport {
  workflowName: string;
  node: {
    id: string;
    name: string;
    displayName: string;
    templateName?: string;
    /** Succeeded, Failed or Error. */
    phase: string;
    message?: string;
    /** RFC 3339, as in the workflow's status. */
    startedAt: string;
    finishedAt?: string;
  };
  /** The stored artifacts the step received (literal `raw` inputs are not stored and not listed). */
  inputs: StepArtifact[];
  /** The artifacts it stored, its `main-logs` included. */
  outputs: StepArtifact[];
}

/** Where an engine reports progress; the run service persists it. */
export interface EngineListener {
  workflowUpdated(update: WorkflowUpdate): Promise<void>;
  metricsReported(runId: string, nodeId: string, metrics: StepMetric[]): Promise<void>;
  /**
   * A step ran (its node Succeeded, Failed or Error after it had started; never for skipped steps
   * or steps that never got to run). The engine waits for it before anything that depends on
   * the step starts, and before the run's final update; a rejection does not fail the run.
   * Optional: a listener that does not care about single steps leaves it out.
   */
  stepFinished?(runId: string, step: StepReport): Promise<void>;
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
