// Running workflows through a real server: create a run from a manifest, wait for it to finish.
import { execFileSync } from "node:child_process";
import { expect } from "vitest";
import type { TestServer } from "../helpers/server.js";

export interface WorkflowNode {
  id: string;
  name: string;
  displayName: string;
  type: string;
  phase: string;
  templateName?: string;
  boundaryID?: string;
  children?: string[];
  message?: string;
  startedAt?: string;
  finishedAt?: string;
  inputs?: { parameters?: { name: string; value?: string }[] };
  outputs?: { parameters?: { name: string; value?: string }[]; artifacts?: { name: string; s3?: { key: string } }[]; exitCode?: string };
}

export interface FinishedRun {
  id: string;
  status: string;
  run: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  workflow: { metadata: { name: string }; status: { phase: string; message?: string; nodes: Record<string, WorkflowNode> } };
  nodes: WorkflowNode[];
  byDisplayName(name: string): WorkflowNode;
}

export const commandExists = (command: string) => {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

export async function startRun(t: TestServer, manifest: string | object, parameters: { name: string; value: string }[] = []) {
  const workflowManifest = typeof manifest === "string" ? manifest : JSON.stringify(manifest);
  const res = await t.rest("POST", "/apis/v1beta1/runs", { name: "engine test", pipeline_spec: { workflow_manifest: workflowManifest, parameters } });
  expect(res.status).toBe(200);
  return res.body.run.id as string;
}

export async function runDetail(t: TestServer, id: string): Promise<FinishedRun> {
  const body = (await t.rest("GET", `/apis/v1beta1/runs/${id}`)).body;
  const workflow = JSON.parse(body.pipeline_runtime.workflow_manifest);
  const nodes = Object.values(workflow.status?.nodes ?? {}) as WorkflowNode[];
  return {
    id,
    status: body.run.status,
    run: body.run,
    workflow,
    nodes,
    byDisplayName(name) {
      const node = nodes.find((n) => n.displayName === name);
      if (!node) throw new Error(`no node ${name}; have ${nodes.map((n) => n.displayName).join(", ")}`);
      return node;
    },
  };
}

export async function waitForRun(t: TestServer, id: string, timeoutMs = 30_000): Promise<FinishedRun> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const detail = await runDetail(t, id);
    if (["Succeeded", "Failed", "Error"].includes(detail.status) && detail.run.finished_at) return detail;
    if (Date.now() > deadline) throw new Error(`run ${id} still ${detail.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function runToEnd(t: TestServer, manifest: string | object, parameters?: { name: string; value: string }[]) {
  return waitForRun(t, await startRun(t, manifest, parameters));
}

/** The invariants of an Argo node tree: ids, links and boundaries, times of finished nodes. */
export function expectWellFormedTree(run: FinishedRun) {
  const { nodes } = run.workflow.status;
  const root = nodes[run.workflow.metadata.name];
  expect(root, "root node named after the workflow").toBeDefined();
  for (const node of Object.values(nodes)) {
    expect(node.id).toBe(Object.keys(nodes).find((k) => nodes[k] === node));
    for (const child of node.children ?? []) expect(nodes[child], `child ${child} of ${node.name}`).toBeDefined();
    if (node.boundaryID) expect(["DAG", "Steps"]).toContain(nodes[node.boundaryID]?.type);
    if (["Succeeded", "Failed", "Error", "Skipped"].includes(node.phase)) expect(node.finishedAt, node.name).toBeDefined();
  }
}
