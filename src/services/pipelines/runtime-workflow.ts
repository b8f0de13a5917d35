// The workflow a run executes, Argo-shaped: the resolved workflow with its generated name, the
// run's id as uid, and the KFP output artifacts made optional, as the original server did.
import { randomInt } from "node:crypto";
import type { Workflow } from "./workflow.js";

const kfpOptionalArtifacts = new Set(["mlpipeline-ui-metadata", "mlpipeline-metrics"]);

/** Five random lowercase letters, as Kubernetes completes a generateName. */
export function nameSuffix(): string {
  return Array.from({ length: 5 }, () => String.fromCharCode(97 + randomInt(26))).join("");
}

interface Metadata {
  name?: string;
  generateName?: string;
  [key: string]: unknown;
}

interface Template {
  outputs?: { artifacts?: { name?: string; optional?: boolean }[] };
}

export function runtimeWorkflow(workflow: Workflow, runId: string, createdAtMs: bigint, suffix = nameSuffix()): Workflow {
  const runtime = structuredClone(workflow) as Workflow & { metadata?: Metadata; spec?: { templates?: Template[] } };
  const metadata: Metadata = runtime.metadata ?? {};
  const name = metadata.generateName ? `${metadata.generateName}${suffix}` : (metadata.name ?? `pipeline-run-${suffix}`);
  runtime.metadata = {
    ...metadata,
    name,
    uid: runId,
    creationTimestamp: new Date(Number(createdAtMs)).toISOString().replace(/\.\d{3}Z$/, "Z"),
  };
  for (const template of runtime.spec?.templates ?? []) {
    for (const artifact of template.outputs?.artifacts ?? []) {
      if (artifact.name && kfpOptionalArtifacts.has(artifact.name)) artifact.optional = true;
    }
  }
  runtime.status = {};
  return runtime;
}
