// DAG and steps templates: children scheduled by their dependencies or groups, with their
// conditions and loops; loop outputs aggregated; the composite's own outputs from its children's.
import type { ArgoTask, ArgoTemplate } from "./argo-types.js";
import { failed, nodeOutputs, placement, type Invocation, type ResolvedInputs, type Result } from "./invocation.js";
import { itemLabel, itemsFromWithItems, itemsFromWithParam, itemsFromWithSequence, itemVariables, type LoopItem } from "./loop-items.js";
import type { ArtifactValue, NodePhase, NodeStatus, NodeTree } from "./node-tree.js";
import { artifactReference, noOutputs, type Outputs, type Scope } from "./scope.js";
import { Semaphore } from "./semaphore.js";
import { substitute, substituteDeep } from "./template-vars.js";
import { evaluateWhen } from "./when-expression.js";
import { WorkflowError } from "./workflow-error.js";

/** What composite templates need from the execution they run in. */
export interface CompositeHost {
  readonly tree: NodeTree;
  readonly signal: AbortSignal;
  abortMessage(): string;
  invoke(inv: Invocation): Promise<Result>;
  errorNode(inv: Invocation, err: unknown): Result;
}

export class CompositeRunner {
  constructor(private readonly host: CompositeHost) {}

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
  private async runChild(
    task: ArgoTask,
    scope: Scope,
    parent: NodeStatus,
    boundaryId: string,
    namePrefix: string,
    depth: number,
  ): Promise<Result & { nodeId: string }> {
    const lookup = scope.lookup();
    let items: LoopItem[] | undefined;
    try {
      // Loop definitions may themselves use variables (`count: "{{inputs.parameters.n}}"`).
      if (task.withItems) items = itemsFromWithItems(substituteDeep(task.withItems, lookup));
      else if (task.withParam !== undefined) items = itemsFromWithParam(substitute(task.withParam, lookup));
      else if (task.withSequence) items = itemsFromWithSequence(substituteDeep(task.withSequence, lookup));
    } catch (err) {
      const result = this.host.errorNode({ template: task.template, parameters: {}, artifacts: {}, nodeName: `${namePrefix}.${task.name}`, displayName: task.name, parentId: parent.id, boundaryId }, err);
      return { ...result, nodeId: this.host.tree.idOf(`${namePrefix}.${task.name}`) };
    }
    const expansions = (items ?? [undefined]).map((item) => ({
      item,
      name: item ? `${namePrefix}.${task.name}${itemLabel(item)}` : `${namePrefix}.${task.name}`,
      displayName: item ? `${task.name}${itemLabel(item)}` : task.name,
    }));
    const results = await Promise.all(
      expansions.map(async ({ item, name, displayName }) => {
        const itemScope = item ? scope.child(itemVariables(item)) : scope;
        const inv = { template: task.template, parameters: {}, artifacts: {}, nodeName: name, displayName, parentId: parent.id, boundaryId, depth };
        try {
          const itemLookup = itemScope.lookup();
          // As Argo does for tasks and steps, references to outputs that do not exist (a skipped
          // dependency's) stay as written instead of failing the task.
          const keep = { onMissing: "keep" } as const;
          if (task.when !== undefined) {
            const condition = substitute(task.when, itemLookup, keep);
            if (!evaluateWhen(condition)) {
              this.host.tree.add({ ...placement(inv), type: "Skipped", templateName: task.template, phase: "Skipped", message: `when '${condition}' evaluated false` });
              return { phase: "Skipped" as NodePhase, outputs: noOutputs() };
            }
          }
          const parameters = Object.fromEntries(
            (task.arguments?.parameters ?? []).map((p) => [p.name, substitute(String(p.value ?? ""), itemLookup, keep)]),
          );
          const artifacts = Object.fromEntries(
            (task.arguments?.artifacts ?? []).map((a) => [a.name, a.from ? this.artifactFrom(substitute(a.from, itemLookup, keep), itemScope) : a]),
          ) as Record<string, ArtifactValue>;
          return await this.host.invoke({ ...inv, parameters, artifacts });
        } catch (err) {
          return this.host.errorNode(inv, err);
        }
      }),
    );
    const nodeId = this.host.tree.idOf(expansions[0].name);
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
    if (this.host.signal.aborted) {
      this.host.tree.update(node.id, { phase: "Failed", message: this.host.abortMessage() });
      return { phase: "Failed", outputs: noOutputs() };
    }
    if (failed(phase)) {
      this.host.tree.update(node.id, { phase, message });
      return { phase, outputs: noOutputs() };
    }
    try {
      const outputs = this.compositeOutputs(template, scope);
      this.host.tree.update(node.id, { phase: "Succeeded", outputs: nodeOutputs(outputs) });
      return { phase: "Succeeded", outputs };
    } catch (err) {
      this.host.tree.update(node.id, { phase: "Error", message: (err as Error).message });
      return { phase: "Error", outputs: noOutputs() };
    }
  }

  async runDag(template: ArgoTemplate, inputs: ResolvedInputs, inv: Invocation): Promise<Result> {
    const node = this.host.tree.add({ ...placement(inv), type: "DAG", templateName: template.name, inputs: inputs.node });
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
    while (!this.host.signal.aborted) {
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
            const run = () => this.runChild(task, scope, node, node.id, inv.nodeName, (inv.depth ?? 0) + 1);
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

  async runSteps(template: ArgoTemplate, inputs: ResolvedInputs, inv: Invocation): Promise<Result> {
    const node = this.host.tree.add({ ...placement(inv), type: "Steps", templateName: template.name, inputs: inputs.node });
    const scope = inputs.scope.child();
    let failure: string | undefined;
    for (const [index, group] of (template.steps ?? []).entries()) {
      if (this.host.signal.aborted || failure) break;
      const groupName = `${inv.nodeName}[${index}]`;
      const groupNode = this.host.tree.add({ name: groupName, displayName: `[${index}]`, type: "StepGroup", parentId: node.id, boundaryId: node.id });
      const limit = template.parallelism ? new Semaphore(Number(template.parallelism)) : undefined;
      const results = await Promise.all(
        group.map(async (step) => {
          const run = () => this.runChild(step, scope, groupNode, node.id, groupName, (inv.depth ?? 0) + 1);
          return { step, result: limit ? await limit.run(run) : await run() };
        }),
      );
      for (const { step, result } of results) {
        scope.record("steps", step.name, result.nodeId, result.phase, result.outputs);
        const allowed = (result.phase === "Failed" && step.continueOn?.failed) || (result.phase === "Error" && step.continueOn?.error);
        if (failed(result.phase) && !allowed) failure ??= `child '${result.nodeId}' failed`;
      }
      this.host.tree.update(groupNode.id, { phase: this.host.signal.aborted ? "Failed" : failure ? "Failed" : "Succeeded" });
    }
    return this.finishComposite(node, template, scope, failure ? "Failed" : "Succeeded", failure);
  }
}
