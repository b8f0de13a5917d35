// What passes between the workflow interpreter and the composite templates it runs.
import type { ArtifactValue, NodePhase, NodeStatus } from "./node-tree.js";
import type { InputArtifact } from "./pod-runner.js";
import type { Outputs, Scope } from "./scope.js";

/** One call of a template: its arguments and where its node goes in the tree. */
export interface Invocation {
  template: string;
  parameters: Record<string, string>;
  artifacts: Record<string, ArtifactValue>;
  nodeName: string;
  displayName: string;
  parentId?: string;
  boundaryId?: string;
  /** How many DAG or steps templates enclose this call. */
  depth?: number;
  /** Variables only this invocation sees (the exit handler's workflow.status). */
  scopeExtra?: Record<string, string>;
}

/** A template invocation's resolved inputs. */
export interface ResolvedInputs {
  scope: Scope;
  inputArtifacts: Record<string, InputArtifact>;
  /** For the node's `inputs`, as Argo shows them. */
  node?: NodeStatus["inputs"];
}

export interface Result {
  phase: NodePhase;
  outputs: Outputs;
}

export const failed = (phase: NodePhase) => phase === "Failed" || phase === "Error";

/** A node's `outputs` as Argo shows them (absent when there are none). */
export function nodeOutputs(outputs: Outputs): NodeStatus["outputs"] {
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

/** The tree position of an invocation's node. */
export const placement = (inv: Invocation) => ({
  name: inv.nodeName,
  displayName: inv.displayName,
  parentId: inv.parentId,
  boundaryId: inv.boundaryId,
});
