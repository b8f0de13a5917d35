// A run's or job's pipeline_spec: a stored pipeline or an inline workflow manifest (JSON or
// YAML), plus parameter values that override the workflow's argument defaults.
import { create } from "@bufbuild/protobuf";
import type { Parameter } from "../../../gen/proto/kfp/parameter_pb.js";
import { PipelineSpecSchema, type PipelineSpec } from "../../../gen/proto/kfp/pipeline_spec_pb.js";
import { invalidArgument, notFound } from "../../errors.js";
import type { PipelineStore } from "../../store/pipelines/pipeline-store.js";
import { parseWorkflow, withParameterValues, type Workflow } from "./workflow.js";

export interface ParameterValue {
  name: string;
  value: string;
}

export interface ResolvedPipelineSpec {
  pipelineId?: string;
  /** What pipeline_spec.workflow_manifest echoes: the manifest as given, or the pipeline's workflow as JSON. */
  workflowManifest: string;
  parameters: ParameterValue[];
  /** The workflow with the parameter values applied. */
  workflow: Workflow;
}

// The original server's limit on the serialised parameters.
const maxParametersJsonBytes = 10_000;

export async function resolvePipelineSpec(
  spec: PipelineSpec | undefined,
  pipelines: PipelineStore,
): Promise<ResolvedPipelineSpec> {
  const pipelineId = spec?.pipelineId ?? "";
  const manifest = spec?.workflowManifest ?? "";
  if ((pipelineId === "") === (manifest === "")) {
    throw invalidArgument("pipeline_spec needs exactly one of pipeline_id and workflow_manifest");
  }
  let workflow: Workflow;
  let workflowManifest = manifest;
  if (pipelineId !== "") {
    const pipeline = await pipelines.byId(pipelineId);
    if (!pipeline) throw notFound(`pipeline ${pipelineId} not found`);
    workflow = parseWorkflow(pipeline.template);
    workflowManifest = JSON.stringify(workflow);
  } else {
    workflow = parseWorkflow(manifest);
  }
  const parameters = (spec?.parameters ?? []).map((p: Parameter) => ({ name: p.name, value: p.value }));
  if (Buffer.byteLength(JSON.stringify(parameters)) > maxParametersJsonBytes) {
    throw invalidArgument(`pipeline_spec.parameters exceed ${maxParametersJsonBytes} bytes as JSON`);
  }
  return {
    ...(pipelineId !== "" && { pipelineId }),
    workflowManifest,
    parameters,
    workflow: withParameterValues(workflow, parameters),
  };
}

/** The pipeline_spec of a stored run or job. */
export function pipelineSpecOf(row: { pipelineId: string | null; workflowManifest: string; parameters: string }): PipelineSpec {
  return create(PipelineSpecSchema, {
    pipelineId: row.pipelineId ?? "",
    workflowManifest: row.workflowManifest,
    parameters: JSON.parse(row.parameters) as ParameterValue[],
  });
}
