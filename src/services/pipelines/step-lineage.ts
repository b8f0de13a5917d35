// Runs' lineage in the metadata service, so that both APIs describe the same runs: every step the
// engine ran becomes an execution, every artifact it stored an artifact (its uri where the
// artifact store keeps it) with an OUTPUT event, and every stored artifact it received an INPUT
// event on the artifact recorded when an earlier step of the run produced it.
//
// The types are registered on first use, not at start-up: a fresh server lists only the
// kubeflow.org/alpha types. Recording never fails a run; a failure is logged.
import { create } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import {
  Event_Path_StepSchema,
  Event_PathSchema,
  Event_Type,
  Execution_State,
  PropertyType,
  ValueSchema,
  type Event_Path,
  type Value,
} from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import type { ArtifactStore } from "../../artifacts/store.js";
import type { StepArtifact, StepReport } from "../../engine/engine.js";
import type { MetadataDomain } from "../metadata/index.js";

const strings = (...names: string[]) => Object.fromEntries(names.map((name) => [name, PropertyType.STRING]));

/**
 * A step of a pipeline run (an Argo Pod node). `name` is the node's display name, as metadata
 * UIs show `name`; `phase` is the node's (Succeeded, Failed or Error), times are RFC 3339.
 */
export const pipelineStepType = {
  name: "pipewright.org/pipeline_step",
  properties: strings(
    "name",
    "run_id",
    "workflow_name",
    "node_id",
    "node_name",
    "display_name",
    "template_name",
    "phase",
    "message",
    "started_at",
    "finished_at",
  ),
};

/**
 * An artifact a step stored: `name` is the output's (`main-logs` for the step's log), `path`
 * where the step wrote it, `node_id` the producing node. Its uri is the stored archive's.
 */
export const stepArtifactType = {
  name: "pipewright.org/step_artifact",
  properties: strings("name", "run_id", "workflow_name", "node_id", "path"),
};

const text = (value: string): Value => create(ValueSchema, { value: { case: "stringValue", value } });

/** The properties that have a value. */
const textProperties = (values: Record<string, string | undefined>): Record<string, Value> =>
  Object.fromEntries(Object.entries(values).flatMap(([key, value]) => (value === undefined ? [] : [[key, text(value)]])));

/** An event's path: the artifact's name as the step knows it (output name, or input name). */
const pathOf = (name: string): Event_Path =>
  create(Event_PathSchema, { steps: [create(Event_Path_StepSchema, { value: { case: "key", value: name } })] });

export class StepLineage {
  private types?: Promise<void>;
  /** Per run in flight: artifact store key → id of the artifact recorded for it. */
  private readonly runs = new Map<string, Map<string, Promise<bigint>>>();

  constructor(
    private readonly metadata: Pick<MetadataDomain, "artifactTypes" | "executionTypes" | "artifacts" | "executions" | "lineage">,
    private readonly store: Pick<ArtifactStore, "uriOf">,
    private readonly log: Logger,
  ) {}

  /** Records one finished step; never throws. */
  async record(runId: string, step: StepReport): Promise<void> {
    try {
      await this.ensureTypes();
      await this.write(runId, step);
    } catch (err) {
      // Perhaps someone changed the types meanwhile: check them again next time.
      this.types = undefined;
      this.log.warn({ err, runId, nodeId: step.node.id }, "could not record the step's lineage in the metadata service");
    }
  }

  /** The run has finished: no later step will consume its artifacts. */
  forget(runId: string): void {
    this.runs.delete(runId);
  }

  private ensureTypes(): Promise<void> {
    this.types ??= (async () => {
      await this.metadata.executionTypes.ensure(pipelineStepType);
      await this.metadata.artifactTypes.ensure(stepArtifactType);
    })();
    return this.types;
  }

  private async write(runId: string, step: StepReport): Promise<void> {
    const { node } = step;
    const execution = await this.metadata.executions.create(
      `execution_types/${pipelineStepType.name}`,
      {
        properties: textProperties({
          name: node.displayName,
          run_id: runId,
          workflow_name: step.workflowName,
          node_id: node.id,
          node_name: node.name,
          display_name: node.displayName,
          template_name: node.templateName,
          phase: node.phase,
          message: node.message,
          started_at: node.startedAt,
          finished_at: node.finishedAt,
        }),
        customProperties: {},
        lastKnownState: node.phase === "Succeeded" ? Execution_State.COMPLETE : Execution_State.FAILED,
      },
      false,
    );
    let known = this.runs.get(runId);
    if (!known) this.runs.set(runId, (known = new Map()));
    for (const input of step.inputs) {
      // Produced by an earlier step of the run, or else (a literal key in the manifest) new here.
      const artifactId = known.get(input.key) ?? this.remember(known, input.key, this.createArtifact(input, {}));
      await this.link(await artifactId, execution.id, Event_Type.INPUT, input.name);
    }
    for (const output of step.outputs) {
      const origin = { run_id: runId, workflow_name: step.workflowName, node_id: node.id };
      const artifactId = this.remember(known, output.key, this.createArtifact(output, origin));
      await this.link(await artifactId, execution.id, Event_Type.OUTPUT, output.name);
    }
  }

  /** Shared while it is being created, so that concurrent consumers find one artifact; forgotten if it fails. */
  private remember(known: Map<string, Promise<bigint>>, key: string, id: Promise<bigint>): Promise<bigint> {
    known.set(key, id);
    id.catch(() => {
      if (known.get(key) === id) known.delete(key);
    });
    return id;
  }

  private async createArtifact(artifact: StepArtifact, origin: Record<string, string>): Promise<bigint> {
    const created = await this.metadata.artifacts.create(
      `artifact_types/${stepArtifactType.name}`,
      {
        uri: this.store.uriOf(artifact.key),
        properties: textProperties({ name: artifact.name, ...origin, path: artifact.path }),
        customProperties: {},
      },
      false,
    );
    return created.id;
  }

  private link(artifactId: bigint, executionId: bigint, type: Event_Type, name: string): Promise<void> {
    return this.metadata.lineage.record({ artifactId, executionId, type, path: pathOf(name) });
  }
}
