// One run's workflow, interpreted: templates invoked with their inputs, DAGs and steps scheduled
// with their conditions and loops, retries, deadlines, the exit handler, and every node recorded
// in an Argo-shaped tree.
import type { ArtifactStore } from "../../artifacts/store.js";
import type { StepArtifact, StepMetric, StepReport } from "../engine.js";
import type { ArgoTask, ArgoTemplate, ArgoWorkflow } from "./argo-types.js";
import { secondsToMs } from "./durations.js";
import { itemLabel, itemsFromWithItems, itemsFromWithParam, itemsFromWithSequence, itemVariables, type LoopItem } from "./loop-items.js";
import { argoTime, NodeTree, type ArtifactValue, type NodePhase, type NodeStatus } from "./node-tree.js";
import { runPod, type InputArtifact } from "./pod-runner.js";
import { Semaphore } from "./semaphore.js";
import { artifactReference, noOutputs, Scope, type Outputs } from "./scope.js";
import { substitute, substituteDeep } from "./template-vars.js";
import { evaluateWhen } from "./when-expression.js";
import { WorkflowError } from "./workflow-error.js";

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

interface Invocation {
  template: string;
  parameters: Record<string, string>;
  artifacts: Record<string, ArtifactValue>;
  nodeName: string;
  displayName: string;
  parentId?: string;
  boundaryId?: string;
  /** Variables only this invocation sees (the exit handler's workflow.status). */
  scopeExtra?: Record<string, string>;
}

/** A template invocation's resolved inputs. */
interface ResolvedInputs {
  scope: Scope;
  inputArtifacts: Record<string, InputArtifact>;
  /** For the node's `inputs`, as Argo shows them. */
  node?: NodeStatus["inputs"];
}

interface Result {
  phase: NodePhase;
  outputs: Outputs;
}

const failed = (phase: NodePhase) => phase === "Failed" || phase === "Error";

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

  constructor(
    private readonly workflow: ArgoWorkflow,
    private readonly deps: ExecutionDeps,
  ) {
    this.name = workflow.metadata.name;
    this.startedAt = deps.now();
    this.tree = new NodeTree(this.name, deps.now, deps.changed);
    for (const template of workflow.spec.templates ?? []) this.templates.set(template.name, template);
    if (workflow.spec.parallelism) this.podSlots = new Semaphore(Number(workflow.spec.parallelism));
    const parameters = Object.fromEntries(
      (workflow.spec.arguments?.parameters ?? []).map((p) => [`workflow.parameters.${p.name}`, p.value ?? ""]),
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
    const deadline = this.workflow.spec.activeDeadlineSeconds;
    const timer =
      deadline !== undefined
        ? setTimeout(() => this.stop("Max duration limit exceeded"), secondsToMs(deadline, "spec.activeDeadlineSeconds"))
        : undefined;
    try {
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
      template = this.template(inv.template);
    } catch (err) {
      return this.errorNode(inv, err);
    }
    const limit = template.retryStrategy ? Number(template.retryStrategy.limit ?? 0) : undefined;
    if (limit === undefined) return this.invokeOnce(inv, template);
    const retry = this.tree.add({ ...this.placement(inv), type: "Retry", templateName: template.name });
    let last: Result = { phase: "Error", outputs: noOutputs() };
    for (let attempt = 0; attempt <= limit && !this.abort.signal.aborted; attempt++) {
      last = await this.invokeOnce(
        { ...inv, nodeName: `${inv.nodeName}(${attempt})`, displayName: `${inv.displayName}(${attempt})`, parentId: retry.id },
        template,
      );
      if (!failed(last.phase)) break;
    }
    this.tree.update(retry.id, { phase: last.phase, outputs: this.nodeOutputs(last.outputs) });
    return last;
  }

  private placement(inv: Invocation) {
    return { name: inv.nodeName, displayName: inv.displayName, parentId: inv.parentId, boundaryId: inv.boundaryId };
  }

  private errorNode(inv: Invocation, err: unknown, type: NodeStatus["type"] = "Pod"): Result {
    this.tree.add({ ...this.placement(inv), type, templateName: inv.template, phase: "Error", message: (err as Error).message });
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
    if (template.dag) return this.runDag(template, inputs, inv);
    if (template.steps) return this.runSteps(template, inputs, inv);
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
    const node = this.tree.add({ ...this.placement(inv), type: "Pod", templateName: template.name, phase: "Pending", inputs: inputs.node });
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
          tree: this.tree,
          signal: this.abort.signal,
          abortMessage: () => this.abortMessage,
          metrics: (nodeId, metrics) => this.deps.metrics(nodeId, metrics),
        },
        node,
        template,
        podScope,
        inputs.inputArtifacts,
      );
      this.tree.update(node.id, { phase: result.phase, message: result.message, outputs: this.nodeOutputs(result.outputs) });
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

  private nodeOutputs(outputs: Outputs): NodeStatus["outputs"] {
    const parameters = Object.entries(outputs.parameters).map(([name, value]) => ({ name, value }));
    const artifacts = Object.values(outputs.artifacts);
    if (!parameters.length && !artifacts.length && outputs.result === undefined && outputs.exitCode === undefined) return undefined;
    return {
      ...(parameters.length && { parameters }),
      ...(artifacts.length && { artifacts }),
      ...(outputs.result !== undefined && { result: outputs.result }),
      ...(outputs.exitCode !== undefined && { exitCode: outputs.exitCode }),
    };
  }

  /** Outputs a DAG or steps template declares, from its children's (valueFrom.parameter, from). */
  private compositeOutputs(template: ArgoTemplate, scope: Scope): Outputs {
    const outputs = noOutputs();
    const lookup = scope.lookup();
    for (const parameter of template.outputs?.parameters ?? []) {
      const expression = parameter.valueFrom?.parameter;
      try {
        if (expression === undefined) throw new WorkflowError(`output parameter "${parameter.name}" needs valueFrom.parameter`);
        outputs.parameters[parameter.name] = substitute(expression, lookup);
      } catch (err) {
        if (parameter.valueFrom?.default === undefined) throw err;
        outputs.parameters[parameter.name] = parameter.valueFrom.default;
      }
    }
    for (const artifact of template.outputs?.artifacts ?? []) {
      const value = artifact.from ? this.artifactFrom(artifact.from, scope) : undefined;
      if (value) outputs.artifacts[artifact.name] = { ...value, name: artifact.name };
      else if (!artifact.optional) throw new WorkflowError(`output artifact "${artifact.name}" has no source`);
    }
    return outputs;
  }

  private artifactFrom(from: string, scope: Scope): ArtifactValue {
    const reference = artifactReference(from);
    const value = reference ? scope.artifact(reference) : undefined;
    if (!value) throw new WorkflowError(`artifact ${from} is not available`);
    return value;
  }

  /** Runs one task or step (with its loop and condition) as children of `parent`. */
  private async runChild(task: ArgoTask, scope: Scope, parent: NodeStatus, boundaryId: string, namePrefix: string): Promise<Result & { nodeId: string }> {
    const lookup = scope.lookup();
    let items: LoopItem[] | undefined;
    try {
      // Loop definitions may themselves use variables (`count: "{{inputs.parameters.n}}"`).
      if (task.withItems) items = itemsFromWithItems(substituteDeep(task.withItems, lookup));
      else if (task.withParam !== undefined) items = itemsFromWithParam(substitute(task.withParam, lookup));
      else if (task.withSequence) items = itemsFromWithSequence(substituteDeep(task.withSequence, lookup));
    } catch (err) {
      const result = this.errorNode({ template: task.template, parameters: {}, artifacts: {}, nodeName: `${namePrefix}.${task.name}`, displayName: task.name, parentId: parent.id, boundaryId }, err);
      return { ...result, nodeId: this.tree.idOf(`${namePrefix}.${task.name}`) };
    }
    const expansions = (items ?? [undefined]).map((item) => ({
      item,
      name: item ? `${namePrefix}.${task.name}${itemLabel(item)}` : `${namePrefix}.${task.name}`,
      displayName: item ? `${task.name}${itemLabel(item)}` : task.name,
    }));
    const results = await Promise.all(
      expansions.map(async ({ item, name, displayName }) => {
        const itemScope = item ? scope.child(itemVariables(item)) : scope;
        const inv = { template: task.template, parameters: {}, artifacts: {}, nodeName: name, displayName, parentId: parent.id, boundaryId };
        try {
          const itemLookup = itemScope.lookup();
          // As Argo does for tasks and steps, references to outputs that do not exist (a skipped
          // dependency's) stay as written instead of failing the task.
          const keep = { onMissing: "keep" } as const;
          if (task.when !== undefined) {
            const condition = substitute(task.when, itemLookup, keep);
            if (!evaluateWhen(condition)) {
              this.tree.add({ ...this.placement(inv), type: "Skipped", templateName: task.template, phase: "Skipped", message: `when '${condition}' evaluated false` });
              return { phase: "Skipped" as NodePhase, outputs: noOutputs() };
            }
          }
          const parameters = Object.fromEntries(
            (task.arguments?.parameters ?? []).map((p) => [p.name, substitute(String(p.value ?? ""), itemLookup, keep)]),
          );
          const artifacts = Object.fromEntries(
            (task.arguments?.artifacts ?? []).map((a) => [a.name, a.from ? this.artifactFrom(substitute(a.from, itemLookup, keep), itemScope) : a]),
          ) as Record<string, ArtifactValue>;
          return await this.invoke({ ...inv, parameters, artifacts });
        } catch (err) {
          return this.errorNode(inv, err);
        }
      }),
    );
    const nodeId = this.tree.idOf(expansions[0].name);
    if (!items) return { ...results[0], nodeId };
    // A loop's outputs are the JSON list of its iterations' outputs, as Argo aggregates them.
    const phase: NodePhase = results.some((r) => failed(r.phase)) ? "Failed" : results.every((r) => r.phase === "Skipped") && results.length > 0 ? "Skipped" : "Succeeded";
    const outputs = noOutputs();
    const names = new Set(results.flatMap((r) => Object.keys(r.outputs.parameters)));
    for (const name of names) outputs.parameters[name] = JSON.stringify(results.map((r) => r.outputs.parameters[name]));
    if (results.some((r) => r.outputs.result !== undefined)) outputs.result = JSON.stringify(results.map((r) => r.outputs.result));
    return { phase, outputs, nodeId };
  }

  private finishComposite(node: NodeStatus, template: ArgoTemplate, scope: Scope, phase: NodePhase, message?: string): Result {
    if (this.abort.signal.aborted) {
      this.tree.update(node.id, { phase: "Failed", message: this.abortMessage });
      return { phase: "Failed", outputs: noOutputs() };
    }
    if (failed(phase)) {
      this.tree.update(node.id, { phase, message });
      return { phase, outputs: noOutputs() };
    }
    try {
      const outputs = this.compositeOutputs(template, scope);
      this.tree.update(node.id, { phase: "Succeeded", outputs: this.nodeOutputs(outputs) });
      return { phase: "Succeeded", outputs };
    } catch (err) {
      this.tree.update(node.id, { phase: "Error", message: (err as Error).message });
      return { phase: "Error", outputs: noOutputs() };
    }
  }

  private async runDag(template: ArgoTemplate, inputs: ResolvedInputs, inv: Invocation): Promise<Result> {
    const node = this.tree.add({ ...this.placement(inv), type: "DAG", templateName: template.name, inputs: inputs.node });
    const scope = inputs.scope.child();
    const tasks = template.dag!.tasks ?? [];
    const byName = new Map(tasks.map((t) => [t.name, t]));
    for (const task of tasks) {
      for (const dependency of task.dependencies ?? []) {
        if (!byName.has(dependency)) return this.finishComposite(node, template, scope, "Error", `task "${task.name}" depends on unknown task "${dependency}"`);
      }
    }
    const limit = template.parallelism ? new Semaphore(Number(template.parallelism)) : undefined;
    const outcome = new Map<string, NodePhase>();
    const running = new Map<string, Promise<void>>();
    let failure: string | undefined;
    const settled = (name: string) => outcome.has(name);
    // Skipped and succeeded dependencies let dependents run; failed ones (without continueOn) block them.
    const passes = (name: string) => {
      const phase = outcome.get(name)!;
      const continueOn = byName.get(name)!.continueOn;
      return !failed(phase) || (phase === "Failed" && continueOn?.failed) || (phase === "Error" && continueOn?.error);
    };
    while (!this.abort.signal.aborted) {
      for (const task of tasks) {
        if (settled(task.name) || running.has(task.name)) continue;
        const deps = task.dependencies ?? [];
        if (!deps.every(settled)) continue;
        if (!deps.every(passes)) {
          outcome.set(task.name, "Omitted");
          continue;
        }
        running.set(
          task.name,
          (async () => {
            const run = () => this.runChild(task, scope, node, node.id, inv.nodeName);
            const result = limit ? await limit.run(run) : await run();
            scope.record("tasks", task.name, result.nodeId, result.phase, result.outputs);
            outcome.set(task.name, result.phase);
            if (failed(result.phase) && !passes(task.name)) failure ??= `child '${result.nodeId}' failed`;
            running.delete(task.name);
          })(),
        );
      }
      if (running.size === 0) break;
      await Promise.race(running.values());
    }
    await Promise.all(running.values());
    return this.finishComposite(node, template, scope, failure ? "Failed" : "Succeeded", failure);
  }

  private async runSteps(template: ArgoTemplate, inputs: ResolvedInputs, inv: Invocation): Promise<Result> {
    const node = this.tree.add({ ...this.placement(inv), type: "Steps", templateName: template.name, inputs: inputs.node });
    const scope = inputs.scope.child();
    let failure: string | undefined;
    for (const [index, group] of (template.steps ?? []).entries()) {
      if (this.abort.signal.aborted || failure) break;
      const groupName = `${inv.nodeName}[${index}]`;
      const groupNode = this.tree.add({ name: groupName, displayName: `[${index}]`, type: "StepGroup", parentId: node.id, boundaryId: node.id });
      const limit = template.parallelism ? new Semaphore(Number(template.parallelism)) : undefined;
      const results = await Promise.all(
        group.map(async (step) => {
          const run = () => this.runChild(step, scope, groupNode, node.id, groupName);
          return { step, result: limit ? await limit.run(run) : await run() };
        }),
      );
      for (const { step, result } of results) {
        scope.record("steps", step.name, result.nodeId, result.phase, result.outputs);
        const allowed = (result.phase === "Failed" && step.continueOn?.failed) || (result.phase === "Error" && step.continueOn?.error);
        if (failed(result.phase) && !allowed) failure ??= `child '${result.nodeId}' failed`;
      }
      this.tree.update(groupNode.id, { phase: this.abort.signal.aborted ? "Failed" : failure ? "Failed" : "Succeeded" });
    }
    return this.finishComposite(node, template, scope, failure ? "Failed" : "Succeeded", failure);
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
