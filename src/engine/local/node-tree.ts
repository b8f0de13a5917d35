// The workflow's status.nodes as Argo writes them, so the KFP UI can draw the graph: ids derived
// from node names, parent/child links, boundaries, phases and times.
import { fnv1a32 } from "../../fnv1a.js";

export type NodeType = "Pod" | "DAG" | "Steps" | "StepGroup" | "Retry" | "Skipped";
export type NodePhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Error" | "Skipped" | "Omitted";

export interface ParameterValue {
  name: string;
  value?: string;
}

export interface ArtifactValue {
  name: string;
  path?: string;
  /** Where the bytes are in the artifact store (Argo's S3 key). */
  s3?: { key: string };
}

export interface NodeIO {
  parameters?: ParameterValue[];
  artifacts?: ArtifactValue[];
  result?: string;
  exitCode?: string;
}

export interface NodeStatus {
  id: string;
  name: string;
  displayName: string;
  type: NodeType;
  templateName?: string;
  phase: NodePhase;
  boundaryID?: string;
  children?: string[];
  startedAt: string;
  finishedAt?: string;
  message?: string;
  inputs?: NodeIO;
  outputs?: NodeIO;
}

const finalPhases: ReadonlySet<NodePhase> = new Set(["Succeeded", "Failed", "Error", "Skipped", "Omitted"]);
export const isFinalPhase = (phase: NodePhase) => finalPhases.has(phase);

/** Argo's time format: RFC 3339 at second precision. */
export const argoTime = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");

export interface NewNode {
  name: string;
  displayName: string;
  type: NodeType;
  templateName?: string;
  parentId?: string;
  boundaryId?: string;
  phase?: NodePhase;
  message?: string;
  inputs?: NodeIO;
}

export class NodeTree {
  readonly nodes: Record<string, NodeStatus> = {};

  constructor(
    private readonly workflowName: string,
    private readonly now: () => number,
    private readonly changed: () => void,
  ) {}

  /** The root node's id is the workflow name; every other id hashes the node's name. */
  idOf(nodeName: string): string {
    return nodeName === this.workflowName ? nodeName : `${this.workflowName}-${fnv1a32(nodeName)}`;
  }

  add(node: NewNode): NodeStatus {
    const id = this.idOf(node.name);
    const status: NodeStatus = {
      id,
      name: node.name,
      displayName: node.displayName,
      type: node.type,
      ...(node.templateName && { templateName: node.templateName }),
      phase: node.phase ?? "Running",
      ...(node.boundaryId && { boundaryID: node.boundaryId }),
      startedAt: argoTime(this.now()),
      ...(node.message && { message: node.message }),
      ...(node.inputs && { inputs: node.inputs }),
    };
    if (isFinalPhase(status.phase)) status.finishedAt = status.startedAt;
    this.nodes[id] = status;
    if (node.parentId) {
      const parent = this.nodes[node.parentId];
      parent.children = [...(parent.children ?? []), id];
    }
    this.changed();
    return status;
  }

  /** Ends a node (or changes it); final phases get their finishedAt. */
  update(id: string, patch: Partial<Pick<NodeStatus, "phase" | "message" | "outputs" | "inputs">>): NodeStatus {
    const node = this.nodes[id];
    Object.assign(node, patch);
    if (patch.phase && isFinalPhase(patch.phase) && !node.finishedAt) node.finishedAt = argoTime(this.now());
    this.changed();
    return node;
  }
}
