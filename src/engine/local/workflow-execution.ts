// One run's workflow, interpreted: templates invoked with their inputs, DAGs and steps scheduled
// with their conditions and loops, retries, deadlines, the exit handler, and every node recorded
// in an Argo-shaped tree.
import { setMaxListeners } from "node:events";
import type { ArtifactStore } from "../../artifacts/store.js";
import type { StepArtifact, StepMetric, StepReport } from "../engine.js";
import type { ArgoTemplate, ArgoWorkflow } from "./argo-types.js";
import { secondsToMs } from "./durations.js";
import { CompositeRunner } from "./composite-runner.js";
import { failed, nodeOutputs, placement, type Invocation, type ResolvedInputs, type Result } from "./invocation.js";
import { argoTime, NodeTree, type ArtifactValue, type NodeStatus } from "./node-tree.js";
import { runPod, type InputArtifact } from "./pod-runner.js";
import { Semaphore } from "./semaphore.js";
import { noOutputs, Scope, type Outputs } from "./scope.js";
import { substitute } from "./template-vars.js";
import { WorkflowError } from "./workflow-error.js";
import { workflowShapeProblem } from "./workflow-shape.js";

export interface ExecutionDeps {
  runId: string;
  artifacts: ArtifactStore;
  /** Server-wide cap on concurrent steps. */
  stepSlots: Semaphore;
  scratchRoot: string;
  now: () => number;
  changed(): void;
  metrics(nodeId: string, metrics: StepMetric[]): Promise<void>;
  /** A step ran to an end; awaited, so that what depends on the step runs after the report. */
  stepFinished(step: StepReport): Promise<void>;
}


// Recursive templates (a DAG task calling its own template under a condition) are allowed, as
// in Argo; this bounds a recursion whose condition never stops it.
const maxNestingDepth = 100;

export class WorkflowExecution {
  readonly tree: NodeTree;
  phase: "Running" | "Succeeded" | "Failed" | "Error" = "Running";
  message?: string;
  readonly startedAt: number;
  finishedAt?: number;

  private readonly name: string;
  private readonly templates = new Map<string, ArgoTemplate>();
  private readonly abort = new AbortController();
  private abortMessage = "terminated";
  private abortPhase: "Failed" | "Error" = "Failed";
  private readonly podSlots?: Semaphore;
  private readonly workflowScope: Scope;
  private readonly composites: CompositeRunner;
  private readonly shapeProblem: string | undefined;

  constructor(
    private readonly workflow: ArgoWorkflow,
    private readonly deps: ExecutionDeps,
  ) {
    this.name = String(workflow?.metadata?.name ?? deps.runId);
    this.startedAt = deps.now();
    this.tree = new NodeTree(this.name, deps.now, deps.changed);
    // Every step waiting for a slot listens to the run's signal: a wide DAG has hundreds.
    setMaxListeners(Infinity, this.abort.signal);
    this.composites = new CompositeRunner({
      tree: this.tree,
      signal: this.abort.signal,
      abortMessage: () => this.abortMessage,
      invoke: (inv) => this.invoke(inv),
      errorNode: (inv, err) => this.errorNode(inv, err),
    });
    // An unsound structure is reported by run(); until then the fields below stay empty.
    this.shapeProblem = workflowShapeProblem(workflow);
    const spec: Partial<ArgoWorkflow["spec"]> = this.shapeProblem ? {} : workflow.spec;
    for (const template of spec.templates ?? []) this.templates.set(template.name, template);
    if (spec.parallelism) this.podSlots = new Semaphore(Number(spec.parallelism));
    const parameters = Object.fromEntries(
      (spec.arguments?.parameters ?? []).map((p) => [`workflow.parameters.${p.name}`, p.value ?? ""]),
    );
    this.workflowScope = new Scope({
      "workflow.name": this.name,
      "workflow.uid": workflow.metadata.uid ?? deps.runId,
      "workflow.namespace": "pipewright",
      "workflow.creationTimestamp": argoTime(this.startedAt),
      ...parameters,
    });
  }

  /** Stops the run: running steps are killed, nothing new starts; the run ends `endPhase`. */
  stop(message: string, endPhase: "Failed" | "Error" = "Failed"): void {
    if (this.abort.signal.aborted) return;
    this.abortMessage = message;
    this.abortPhase = endPhase;
    this.abort.abort(new Error(message));
  }

  /** The Argo `status` block. */
  status(): Record<string, unknown> {
    return {
      phase: this.phase,
      startedAt: argoTime(this.startedAt),
      ...(this.finishedAt !== undefined && { finishedAt: argoTime(this.finishedAt) }),
      ...(this.message && { message: this.message }),
      nodes: this.tree.nodes,
    };
  }

  async run(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    try {
      if (this.shapeProblem) throw new WorkflowError(this.shapeProblem);
      const deadline = this.workflow.spec.activeDeadlineSeconds;
      if (deadline !== undefined) {
        timer = setTimeout(() => this.stop("Max duration limit exceeded"), secondsToMs(deadline, "spec.activeDeadlineSeconds"));
      }
      const args = this.workflow.spec.arguments?.parameters ?? [];
      const entry = await this.invoke({
        template: this.workflow.spec.entrypoint,
        parameters: Object.fromEntries(args.map((p) => [p.name, p.value ?? ""])),
        artifacts: {},
        nodeName: this.name,
        displayName: this.name,
      });
      let phase: "Succeeded" | "Failed" | "Error" =
        entry.phase === "Succeeded" || entry.phase === "Skipped" ? "Succeeded" : entry.phase === "Error" ? "Error" : "Failed";
      if (this.abort.signal.aborted) {
        phase = this.abortPhase;
        this.message = this.abortMessage;
      }
      // A terminated run ends at once; a run past its deadline still gets its exit handler.
      if (this.workflow.spec.onExit && !(this.abort.signal.aborted && this.abortMessage === "terminated")) {
        const exit = await this.invoke({
          template: this.workflow.spec.onExit,
          parameters: {},
          artifacts: {},
          nodeName: `${this.name}.onExit`,
          displayName: `${this.name}.onExit`,
          scopeExtra: { "workflow.status": phase },
        });
        if (failed(exit.phase) && phase === "Succeeded") phase = "Failed";
      }
      this.phase = phase;
    } catch (err) {
      this.phase = "Error";
      this.message = (err as Error).message;
    } finally {
      clearTimeout(timer);
      this.finishedAt = this.deps.now();
      this.deps.changed();
    }
  }

  private template(name: string): ArgoTemplate {
    const template = this.templates.get(name);
    if (!template) throw new WorkflowError(`template "${name}" is not defined`);
    return template;
  }

  /** A template invocation; with a retryStrategy, a Retry node over its attempts. */
  private async invoke(inv: Invocation): Promise<Result> {
    let template: ArgoTemplate;
    try {
      if ((inv.depth ?? 0) > maxNestingDepth) {
        throw new WorkflowError(`templates nest more than ${maxNestingDepth} levels deep: a recursion that does not end?`);
      }
      template = this.template(inv.template);
    } catch (err) {
      return this.errorNode(inv, err);
    }
    const limit = template.retryStrategy ? Number(template.retryStrategy.limit ?? 0) : undefined;
    if (limit === undefined) return this.invokeOnce(inv, template);
    const retry = this.tree.add({ ...placement(inv), type: "Retry", templateName: template.name });
    let last: Result = { phase: "Error", outputs: noOutputs() };
    for (let attempt = 0; attempt <= limit && !this.abort.signal.aborted; attempt++) {
      last = await this.invokeOnce(
        { ...inv, nodeName: `${inv.nodeName}(${attempt})`, displayName: `${inv.displayName}(${attempt})`, parentId: retry.id },
        template,
      );
      if (!failed(last.phase)) break;
    }
    this.tree.update(retry.id, { phase: last.phase, outputs: nodeOutputs(last.outputs) });
    return last;
  }


  private errorNode(inv: Invocation, err: unknown, type: NodeStatus["type"] = "Pod"): Result {
    this.tree.add({ ...placement(inv), type, templateName: inv.template, phase: "Error", message: (err as Error).message });
    return { phase: "Error", outputs: noOutputs() };
  }

  private async invokeOnce(inv: Invocation, template: ArgoTemplate): Promise<Result> {
    let inputs: ResolvedInputs;
    try {
      inputs = this.resolveInputs(template, inv);
      const unsupported = unsupportedKind(template);
      if (unsupported) throw new WorkflowError(unsupported);
    } catch (err) {
      return this.errorNode(inv, err);
    }
    if (template.dag) return this.composites.runDag(template, inputs, inv);
    if (template.steps) return this.composites.runSteps(template, inputs, inv);
    return this.runLeaf(template, inputs, inv);
  }

  private resolveInputs(template: ArgoTemplate, inv: Invocation): ResolvedInputs {
    const workflowLookup = this.workflowScope.lookup();
    const variables: Record<string, string> = { ...inv.scopeExtra };
    const parameters: { name: string; value: string }[] = [];
    for (const parameter of template.inputs?.parameters ?? []) {
      // Arguments arrive substituted already (once, as in Argo); the template's own defaults may
      // still name workflow variables.
      const fallback = parameter.value ?? parameter.default;
      const value = inv.parameters[parameter.name] ?? (fallback === undefined ? undefined : substitute(String(fallback), workflowLookup));
      if (value === undefined) throw new WorkflowError(`input parameter "${parameter.name}" of template "${template.name}" has no value`);
      variables[`inputs.parameters.${parameter.name}`] = value;
      parameters.push({ name: parameter.name, value });
    }
    const artifacts: Record<string, ArtifactValue> = {};
    const inputArtifacts: Record<string, InputArtifact> = {};
    for (const artifact of template.inputs?.artifacts ?? []) {
      const value = inv.artifacts[artifact.name];
      if (artifact.path) variables[`inputs.artifacts.${artifact.name}.path`] = artifact.path;
      if (value) {
        artifacts[`inputs.artifacts.${artifact.name}`] = value;
        if (artifact.path) inputArtifacts[artifact.name] = { path: artifact.path, value };
      } else if (artifact.raw) {
        if (artifact.path) inputArtifacts[artifact.name] = { path: artifact.path, raw: artifact.raw.data };
      } else if (!artifact.optional) {
        throw new WorkflowError(`input artifact "${artifact.name}" of template "${template.name}" was not given`);
      }
    }
    return {
      scope: this.workflowScope.child(variables, artifacts),
      inputArtifacts,
      ...(parameters.length > 0 && { node: { parameters } }),
    };
  }

  private async runLeaf(template: ArgoTemplate, inputs: ResolvedInputs, inv: Invocation): Promise<Result> {
    const node = this.tree.add({ ...placement(inv), type: "Pod", templateName: template.name, phase: "Pending", inputs: inputs.node });
    const podScope = inputs.scope.child({ "pod.name": node.id });
    let releaseWorkflow: (() => void) | undefined;
    let releaseServer: (() => void) | undefined;
    let started = false;
    let outcome: Result;
    try {
      releaseWorkflow = await this.podSlots?.acquire(this.abort.signal);
      releaseServer = await this.deps.stepSlots.acquire(this.abort.signal);
      this.tree.update(node.id, { phase: "Running" });
      started = true;
      const result = await runPod(
        {
          workflowName: this.name,
          runId: this.deps.runId,
          artifacts: this.deps.artifacts,
          scratchRoot: this.deps.scratchRoot,
          signal: this.abort.signal,
          abortMessage: () => this.abortMessage,
          metrics: (nodeId, metrics) => this.deps.metrics(nodeId, metrics),
        },
        node,
        template,
        podScope,
        inputs.inputArtifacts,
      );
      this.tree.update(node.id, { phase: result.phase, message: result.message, outputs: nodeOutputs(result.outputs) });
      outcome = { phase: result.phase, outputs: result.outputs };
    } catch (err) {
      const message = this.abort.signal.aborted ? this.abortMessage : (err as Error).message;
      const phase = this.abort.signal.aborted ? "Failed" : "Error";
      this.tree.update(node.id, { phase, message });
      outcome = { phase, outputs: noOutputs() };
    } finally {
      releaseServer?.();
      releaseWorkflow?.();
    }
    // A step that waited for a slot and was stopped before it ran has nothing to report.
    if (started) await this.reportStep(node, inputs, outcome.outputs);
    return outcome;
  }

  private async reportStep(node: NodeStatus, inputs: ResolvedInputs, outputs: Outputs): Promise<void> {
    const stored = (name: string, value: ArtifactValue | undefined, path?: string): StepArtifact[] =>
      value?.s3?.key ? [{ name, key: value.s3.key, ...((path ?? value.path) !== undefined && { path: path ?? value.path }) }] : [];
    try {
      await this.deps.stepFinished({
        workflowName: this.name,
        node: {
          id: node.id,
          name: node.name,
          displayName: node.displayName,
          ...(node.templateName !== undefined && { templateName: node.templateName }),
          phase: node.phase,
          ...(node.message !== undefined && { message: node.message }),
          startedAt: node.startedAt,
          ...(node.finishedAt !== undefined && { finishedAt: node.finishedAt }),
        },
        inputs: Object.entries(inputs.inputArtifacts).flatMap(([name, input]) => stored(name, input.value, input.path)),
        outputs: Object.entries(outputs.artifacts).flatMap(([name, value]) => stored(name, value)),
      });
    } catch {
      // What listens to steps (lineage) does not decide whether the run succeeds.
    }
  }

}

/** Why a template cannot run locally, or undefined when it can. */
function unsupportedKind(template: ArgoTemplate): string | undefined {
  if (template.resource !== undefined) return `template "${template.name}" creates a Kubernetes resource, which the local engine cannot do`;
  if (template.suspend !== undefined) return `template "${template.name}" suspends the workflow, which the local engine does not support`;
  if (template.daemon) return `template "${template.name}" is a daemon, which the local engine does not support`;
  if (template.sidecars?.length) return `template "${template.name}" has sidecars, which the local engine cannot run`;
  if (!template.container && !template.script && !template.dag && !template.steps) return `template "${template.name}" has no container, script, dag or steps`;
  return undefined;
}
