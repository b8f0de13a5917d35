// The embedded engine: runs workflows in this process, each step a local sandboxed process, at
// most `maxConcurrentSteps` at once across all runs. Progress goes to the listener, throttled.
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import type { ArtifactStore } from "../../artifacts/store.js";
import type { Workflow } from "../../services/pipelines/workflow.js";
import type { EngineListener, WorkflowEngine } from "../engine.js";
import type { ArgoWorkflow } from "./argo-types.js";
import { Semaphore } from "./semaphore.js";
import { WorkflowExecution } from "./workflow-execution.js";

/** What the engine needs from storage to recover and to notice terminations from elsewhere. */
export interface RunLedger {
  /** Runs that were submitted and have not finished: Pending, Running or Terminating. */
  unfinished(): Promise<Array<{ runId: string; status: string; workflow: Workflow }>>;
  /** Of these runs, the ones someone asked to terminate (status Terminating). */
  terminating(runIds: string[]): Promise<string[]>;
}

export interface LocalEngineOptions {
  artifacts: ArtifactStore;
  /** Steps' scratch space (per run, removed when the run ends). */
  scratchRoot: string;
  maxConcurrentSteps: number;
  listener: EngineListener;
  ledger: RunLedger;
  now?: () => number;
  /** How often a running workflow's status is published at most, and terminations polled. */
  publishIntervalMs?: number;
}

interface ActiveRun {
  /** The submitted workflow; its `status` is replaced by the execution's. */
  workflow: Workflow;
  execution: WorkflowExecution;
  done: Promise<void>;
  /** Serialises this run's status writes, so the final one is the last. */
  writes: Promise<void>;
  publishTimer?: NodeJS.Timeout;
}

export class LocalEngine implements WorkflowEngine {
  private readonly active = new Map<string, ActiveRun>();
  private readonly stepSlots: Semaphore;
  private readonly now: () => number;
  private readonly intervalMs: number;
  private readonly poller: NodeJS.Timeout;

  constructor(private readonly options: LocalEngineOptions) {
    this.stepSlots = new Semaphore(options.maxConcurrentSteps);
    this.now = options.now ?? Date.now;
    this.intervalMs = options.publishIntervalMs ?? 250;
    this.poller = setInterval(() => void this.pollTerminations(), Math.max(this.intervalMs, 500));
    this.poller.unref();
  }

  async submit(runId: string, workflow: Workflow): Promise<void> {
    if (this.active.has(runId)) return;
    const scratchRoot = join(this.options.scratchRoot, runId);
    await mkdir(scratchRoot, { recursive: true });
    const run: ActiveRun = {
      workflow,
      execution: new WorkflowExecution(workflow as ArgoWorkflow, {
        runId,
        artifacts: this.options.artifacts,
        stepSlots: this.stepSlots,
        scratchRoot,
        now: this.now,
        changed: () => this.schedulePublish(runId),
        metrics: (nodeId, metrics) => this.options.listener.metricsReported(runId, nodeId, metrics),
        stepFinished: async (step) => {
          await this.options.listener.stepFinished?.(runId, step);
        },
      }),
      done: Promise.resolve(),
      writes: Promise.resolve(),
    };
    this.active.set(runId, run);
    this.publish(runId);
    run.done = run.execution
      .run()
      .then(() => {
        clearTimeout(run.publishTimer);
        this.publish(runId);
        return run.writes;
      })
      .finally(async () => {
        this.active.delete(runId);
        await rm(scratchRoot, { recursive: true, force: true });
      });
  }

  async terminate(runId: string): Promise<void> {
    const run = this.active.get(runId);
    if (!run) return;
    run.execution.stop("terminated");
    await run.done;
  }

  async recover(): Promise<void> {
    // Scratch space left by a previous process that did not stop cleanly.
    if (this.active.size === 0) await rm(this.options.scratchRoot, { recursive: true, force: true });
    for (const run of await this.options.ledger.unfinished()) {
      if (this.active.has(run.runId)) continue;
      if (run.status === "Pending") {
        await this.submit(run.runId, run.workflow);
        continue;
      }
      // Its processes died with the previous server; a half-run workflow is not resumed.
      const message =
        run.status === "Terminating" ? "terminated" : "the server stopped while the run was in flight; it was not resumed";
      await this.options.listener.workflowUpdated({
        runId: run.runId,
        workflow: endedWorkflow(run.workflow, run.status === "Terminating" ? "Failed" : "Error", message, this.now()),
        phase: run.status === "Terminating" ? "Failed" : "Error",
        finishedAt: this.now(),
      });
    }
  }

  async close(): Promise<void> {
    clearInterval(this.poller);
    const runs = [...this.active.values()];
    for (const run of runs) run.execution.stop("the server shut down while the run was in flight", "Error");
    await Promise.all(runs.map((r) => r.done));
  }

  private schedulePublish(runId: string): void {
    const run = this.active.get(runId);
    if (!run || run.publishTimer) return;
    run.publishTimer = setTimeout(() => {
      run.publishTimer = undefined;
      this.publish(runId);
    }, this.intervalMs);
  }

  private publish(runId: string): void {
    const run = this.active.get(runId);
    if (!run) return;
    const { execution } = run;
    const workflow: Workflow = { ...run.workflow, status: execution.status() };
    const update = {
      runId,
      workflow,
      phase: execution.phase,
      ...(execution.finishedAt !== undefined && { finishedAt: execution.finishedAt }),
    };
    run.writes = run.writes.then(() => this.options.listener.workflowUpdated(update)).catch(() => {});
  }

  private async pollTerminations(): Promise<void> {
    if (this.active.size === 0) return;
    try {
      for (const runId of await this.options.ledger.terminating([...this.active.keys()])) {
        this.active.get(runId)?.execution.stop("terminated");
      }
    } catch {
      // A failed poll is retried on the next tick.
    }
  }
}

/** A workflow closed without running (recovery): the given phase on the root and on every unfinished node. */
function endedWorkflow(workflow: Workflow, phase: string, message: string, now: number): Workflow {
  const status = (workflow.status ?? {}) as { nodes?: Record<string, { phase: string; message?: string; finishedAt?: string }> };
  const at = new Date(now).toISOString().replace(/\.\d{3}Z$/, "Z");
  const nodes = Object.fromEntries(
    Object.entries(status.nodes ?? {}).map(([id, node]) =>
      ["Succeeded", "Failed", "Error", "Skipped", "Omitted"].includes(node.phase)
        ? [id, node]
        : [id, { ...node, phase: phase === "Error" ? "Error" : "Failed", message, finishedAt: at }],
    ),
  );
  return { ...workflow, status: { ...status, phase, message, finishedAt: at, nodes } };
}
