// A container or script template, run as one local process in its own filesystem view: inputs
// placed, outputs and logs collected into the artifact store, metrics read, node updated.
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ArtifactStore } from "../../artifacts/store.js";
import type { StepMetric } from "../engine.js";
import type { ArgoContainer, ArgoTemplate } from "./argo-types.js";
import { packArtifact, unpackArtifact } from "./artifact-archive.js";
import { templateTimeoutMs } from "./durations.js";
import type { ArtifactValue, NodePhase, NodeStatus } from "./node-tree.js";
import { noOutputs, type Outputs, type Scope } from "./scope.js";
import { runStep, type StepFile, type StepResult } from "./step-process.js";
import { substitute, substituteDeep } from "./template-vars.js";
import { WorkflowError } from "./workflow-error.js";

/** Where a script template's source is placed, as Argo places it. */
const scriptPath = "/argo/staging/script";
const metricsArtifact = "mlpipeline-metrics";
// As the KFP persistence agent did: at most this many metrics per step.
const maxMetricsPerStep = 50;

export interface PodContext {
  workflowName: string;
  runId: string;
  artifacts: ArtifactStore;
  scratchRoot: string;
  signal: AbortSignal;
  /** Why the signal aborted: "terminated" or the deadline message. */
  abortMessage: () => string;
  metrics(nodeId: string, metrics: StepMetric[]): Promise<void>;
}

export interface InputArtifact {
  path: string;
  value?: ArtifactValue;
  raw?: string;
}

export interface PodResult {
  phase: NodePhase;
  outputs: Outputs;
  message?: string;
}

export const artifactKey = (workflowName: string, nodeId: string, name: string) =>
  `artifacts/${workflowName}/${nodeId}/${name}.tgz`;

/** Argo trims one trailing newline from parameter files and script results, for convenience. */
const trimNewline = (text: string) => (text.endsWith("\n") ? text.slice(0, -1) : text);

function stepEnvironment(context: PodContext, node: NodeStatus, container: ArgoContainer): Record<string, string> {
  const env: Record<string, string> = {
    ARGO_WORKFLOW_NAME: context.workflowName,
    ARGO_NODE_ID: node.id,
    ARGO_POD_NAME: node.id,
    KFP_POD_NAME: node.id,
    KFP_NAMESPACE: "pipewright",
    KFP_RUN_ID: context.runId,
  };
  for (const variable of container.env ?? []) {
    if (variable.valueFrom !== undefined) {
      throw new WorkflowError(`env ${variable.name}: valueFrom (secrets, config maps, fields) is not available locally`);
    }
    env[variable.name] = variable.value ?? "";
  }
  return env;
}

async function placeInputs(context: PodContext, node: NodeStatus, inputs: Record<string, InputArtifact>) {
  const files: StepFile[] = [];
  const directories: { path: string; from: string }[] = [];
  for (const [name, input] of Object.entries(inputs)) {
    if (input.raw !== undefined) {
      files.push({ path: input.path, content: input.raw });
      continue;
    }
    const key = input.value?.s3?.key;
    const tgz = key ? await context.artifacts.get(key) : undefined;
    if (!tgz) throw new WorkflowError(`input artifact "${name}" has no stored content`);
    const unpacked = join(context.scratchRoot, "inputs", node.id, name);
    await mkdir(join(context.scratchRoot, "inputs", node.id), { recursive: true });
    if ((await unpackArtifact(tgz, unpacked)) === "file") files.push({ path: input.path, content: await readFile(unpacked) });
    else directories.push({ path: input.path, from: unpacked });
  }
  return { files, directories };
}

async function storeArtifact(context: PodContext, nodeId: string, name: string, hostPath: string, path: string): Promise<ArtifactValue> {
  const key = artifactKey(context.workflowName, nodeId, name);
  await context.artifacts.put(key, await packArtifact(hostPath));
  return { name, path, s3: { key } };
}

/** KFP's metrics file: {"metrics": [{"name", "numberValue", "format"}]}, camelCase or snake_case. */
function parseMetrics(json: string): StepMetric[] {
  let parsed: { metrics?: Array<Record<string, unknown>> };
  try {
    parsed = JSON.parse(json) as typeof parsed;
  } catch (err) {
    throw new WorkflowError(`${metricsArtifact} is not JSON: ${(err as Error).message}`);
  }
  return (parsed.metrics ?? []).slice(0, maxMetricsPerStep).map((m) => ({
    name: String(m.name ?? ""),
    numberValue: Number(m.numberValue ?? m.number_value ?? 0),
    format: String(m.format ?? "UNSPECIFIED"),
  }));
}

/** Outputs of a finished step: parameters from files, artifacts into the store, metrics reported. */
async function collectOutputs(context: PodContext, node: NodeStatus, template: ArgoTemplate, scope: Scope, step: StepResult): Promise<Outputs> {
  const lookup = scope.lookup();
  const outputs = noOutputs();
  for (const parameter of template.outputs?.parameters ?? []) {
    const path = parameter.valueFrom?.path && substitute(parameter.valueFrom.path, lookup);
    const found = path ? step.outputs.get(path) : undefined;
    if (found?.kind === "file") outputs.parameters[parameter.name] = trimNewline(await readFile(found.hostPath, "utf8"));
    else if (parameter.valueFrom?.default !== undefined) outputs.parameters[parameter.name] = parameter.valueFrom.default;
    else throw new WorkflowError(`output parameter "${parameter.name}": ${path ? `no file at ${path}` : "no valueFrom.path"}`);
  }
  for (const artifact of template.outputs?.artifacts ?? []) {
    const path = artifact.path && substitute(artifact.path, lookup);
    const found = path ? step.outputs.get(path) : undefined;
    if (!found) {
      if (artifact.optional) continue;
      throw new WorkflowError(`output artifact "${artifact.name}": nothing at ${path ?? "(no path)"}`);
    }
    outputs.artifacts[artifact.name] = await storeArtifact(context, node.id, artifact.name, found.hostPath, found.path);
    if (artifact.name === metricsArtifact && found.kind === "file") {
      const metrics = parseMetrics(await readFile(found.hostPath, "utf8"));
      if (metrics.length > 0) await context.metrics(node.id, metrics);
    }
  }
  if (template.script) outputs.result = trimNewline(new TextDecoder().decode(step.stdout));
  if (step.exitCode !== null) outputs.exitCode = String(step.exitCode);
  return outputs;
}

function stepCommand(template: ArgoTemplate, spec: ArgoContainer & { source?: string }) {
  if (template.script) {
    return { argv: [...(spec.command ?? ["sh"]), scriptPath], files: [{ path: scriptPath, content: spec.source ?? "", mode: 0o755 }] };
  }
  const argv = [...(spec.command ?? []), ...(spec.args ?? [])];
  if (argv.length === 0) {
    throw new WorkflowError(`container of template "${template.name}" has no command: the local engine runs the command, not the image's entrypoint`);
  }
  return { argv, files: [] as StepFile[] };
}

export async function runPod(
  context: PodContext,
  node: NodeStatus,
  template: ArgoTemplate,
  scope: Scope,
  inputArtifacts: Record<string, InputArtifact>,
): Promise<PodResult> {
  const lookup = scope.lookup();
  const spec = substituteDeep((template.script ?? template.container)!, lookup) as ArgoContainer & { source?: string };
  if (spec.volumeMounts?.length) {
    throw new WorkflowError(`volume "${spec.volumeMounts[0].name}" cannot be provided by the local engine`);
  }
  const command = stepCommand(template, spec);
  const placed = await placeInputs(context, node, inputArtifacts);
  const outputPaths = [
    ...(template.outputs?.parameters ?? []).flatMap((p) => (p.valueFrom?.path ? [substitute(p.valueFrom.path, lookup)] : [])),
    ...(template.outputs?.artifacts ?? []).flatMap((a) => (a.path ? [substitute(a.path, lookup)] : [])),
  ];
  const step = await runStep(
    {
      argv: command.argv,
      env: stepEnvironment(context, node, spec),
      ...(spec.workingDir && { workingDir: spec.workingDir }),
      files: [...command.files, ...placed.files],
      directories: placed.directories,
      outputPaths,
      timeoutMs: templateTimeoutMs(template),
      signal: context.signal,
    },
    { scratchRoot: join(context.scratchRoot, "steps") },
  );
  try {
    const logs = await storeLogs(context, node.id, step.log);
    if (step.killedBy === "abort") return { phase: "Failed", outputs: withLogs(noOutputs(), logs), message: context.abortMessage() };
    if (step.killedBy === "timeout") {
      return { phase: "Failed", outputs: withLogs(noOutputs(), logs), message: "step exceeded its timeout and was killed" };
    }
    if (step.exitCode !== 0) {
      const outputs = withLogs({ ...noOutputs(), exitCode: String(step.exitCode) }, logs);
      return { phase: "Failed", outputs, message: `failed with exit code ${step.exitCode}` };
    }
    return { phase: "Succeeded", outputs: withLogs(await collectOutputs(context, node, template, scope, step), logs) };
  } finally {
    await step.dispose();
  }
}

/** The step's output as its `main-logs` artifact, as Argo archives logs. */
async function storeLogs(context: PodContext, nodeId: string, log: Uint8Array): Promise<ArtifactValue> {
  const dir = join(context.scratchRoot, "logs", nodeId);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, "main.log"), log);
  return storeArtifact(context, nodeId, "main-logs", join(dir, "main.log"), "main.log");
}

const withLogs = (outputs: Outputs, logs: ArtifactValue): Outputs => ({
  ...outputs,
  artifacts: { ...outputs.artifacts, "main-logs": logs },
});
