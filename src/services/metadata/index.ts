// api.MetadataService: maps requests and responses to the registries that hold the rules.
import { create, isFieldSet } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { MetadataService } from "../../../gen/proto/metadata/service_pb.js";
import {
  ArtifactSchema,
  ArtifactTypeSchema,
  EventSchema,
  ExecutionSchema,
  ExecutionTypeSchema,
  type Artifact,
  type ArtifactType,
  type Event,
  type Execution,
  type ExecutionType,
} from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import type { Database } from "../../store/database.js";
import { EventStore, type StoredEvent } from "../../store/metadata/event-store.js";
import { NodeStore, type StoredNode } from "../../store/metadata/node-store.js";
import { TypeStore, type NewType, type StoredType } from "../../store/metadata/type-store.js";
import { Lineage } from "./lineage.js";
import { NodeRegistry } from "./node-registry.js";
import { registerPredefinedTypes } from "./predefined-types.js";
import { TypeRegistry } from "./type-registry.js";

const toArtifactType = (t: StoredType): ArtifactType =>
  create(ArtifactTypeSchema, { id: t.id, name: t.name, properties: t.properties });

const toExecutionType = (t: StoredType): ExecutionType =>
  create(ExecutionTypeSchema, {
    id: t.id,
    name: t.name,
    properties: t.properties,
    ...(t.inputType && { inputType: t.inputType }),
    ...(t.outputType && { outputType: t.outputType }),
  });

const toArtifact = (n: StoredNode): Artifact =>
  create(ArtifactSchema, {
    id: n.id,
    typeId: n.typeId,
    uri: n.uri ?? "",
    properties: n.properties,
    customProperties: n.customProperties,
  });

const toExecution = (n: StoredNode): Execution =>
  create(ExecutionSchema, {
    id: n.id,
    typeId: n.typeId,
    ...(n.lastKnownState !== undefined && { lastKnownState: n.lastKnownState }),
    properties: n.properties,
    customProperties: n.customProperties,
  });

const toEvent = (e: StoredEvent): Event =>
  create(EventSchema, {
    artifactId: e.artifactId,
    executionId: e.executionId,
    type: e.type,
    millisecondsSinceEpoch: e.millisecondsSinceEpoch,
    ...(e.path && { path: e.path }),
  });

const byId = <T>(nodes: StoredNode[], toMessage: (n: StoredNode) => T) =>
  Object.fromEntries(nodes.map((n) => [n.id.toString(), toMessage(n)]));

function typeRequest(type: ArtifactType | ExecutionType | undefined): { definition: NewType; id?: bigint } {
  const definition: NewType = { name: type?.name ?? "", properties: type?.properties ?? {} };
  if (type && "inputType" in type) {
    definition.inputType = type.inputType;
    definition.outputType = type.outputType;
  }
  const idSet = type !== undefined && isFieldSet(type, ArtifactTypeSchema.field.id);
  return { definition, ...(idSet && { id: type.id }) };
}

export interface MetadataDomain {
  artifactTypes: TypeRegistry;
  executionTypes: TypeRegistry;
  artifacts: NodeRegistry;
  executions: NodeRegistry;
  lineage: Lineage;
}

export function metadataDomain(db: Database): MetadataDomain {
  const types = new TypeStore(db.prisma);
  const nodes = new NodeStore(db.prisma);
  return {
    artifactTypes: new TypeRegistry("artifact", types),
    executionTypes: new TypeRegistry("execution", types),
    artifacts: new NodeRegistry("artifact", types, nodes),
    executions: new NodeRegistry("execution", types, nodes),
    lineage: new Lineage(new EventStore(db.prisma), nodes),
  };
}

export function registerMetadataDefaults(domain: MetadataDomain): Promise<void> {
  return registerPredefinedTypes(domain.artifactTypes, domain.executionTypes);
}

export function metadataService(d: MetadataDomain): ServiceImpl<typeof MetadataService> {
  const artifactInput = (a: Artifact | undefined) => {
    const artifact = a ?? create(ArtifactSchema);
    return {
      input: { uri: artifact.uri, properties: artifact.properties, customProperties: artifact.customProperties },
      idGiven: isFieldSet(artifact, ArtifactSchema.field.id),
    };
  };
  const executionInput = (e: Execution | undefined) => {
    const execution = e ?? create(ExecutionSchema);
    const stateSet = isFieldSet(execution, ExecutionSchema.field.lastKnownState);
    return {
      input: {
        properties: execution.properties,
        customProperties: execution.customProperties,
        ...(stateSet && { lastKnownState: execution.lastKnownState }),
      },
      idGiven: isFieldSet(execution, ExecutionSchema.field.id),
    };
  };

  return {
    async createArtifact(req) {
      const { input, idGiven } = artifactInput(req.artifact);
      return { artifact: toArtifact(await d.artifacts.create(req.parent, input, idGiven)) };
    },
    async getArtifact(req) {
      return { artifact: toArtifact(await d.artifacts.get(req.name)) };
    },
    async listArtifacts(req) {
      return { artifacts: (await d.artifacts.list(req.name)).map(toArtifact) };
    },
    async deleteArtifact(req) {
      await d.artifacts.delete(req.name);
      return {};
    },
    async createExecution(req) {
      const { input, idGiven } = executionInput(req.execution);
      return { execution: toExecution(await d.executions.create(req.parent, input, idGiven)) };
    },
    async getExecution(req) {
      return { execution: toExecution(await d.executions.get(req.name)) };
    },
    async listExecutions(req) {
      return { executions: (await d.executions.list(req.name)).map(toExecution) };
    },
    async deleteExecution(req) {
      await d.executions.delete(req.name);
      return {};
    },
    async updateArtifactType(req) {
      const { definition, id } = typeRequest(req.artifactType);
      return { artifactType: toArtifactType(await d.artifactTypes.update(definition, id)) };
    },
    async createArtifactType(req) {
      const { definition, id } = typeRequest(req.artifactType);
      return { artifactType: toArtifactType(await d.artifactTypes.create(definition, id)) };
    },
    async listArtifactTypes() {
      return { artifactTypes: (await d.artifactTypes.list()).map(toArtifactType) };
    },
    async getArtifactType(req) {
      return { artifactType: toArtifactType(await d.artifactTypes.get(req.name)) };
    },
    async deleteArtifactType(req) {
      await d.artifactTypes.delete(req.name);
      return {};
    },
    async updateExecutionType(req) {
      const { definition, id } = typeRequest(req.executionType);
      return { executionType: toExecutionType(await d.executionTypes.update(definition, id)) };
    },
    async createExecutionType(req) {
      const { definition, id } = typeRequest(req.executionType);
      return { executionType: toExecutionType(await d.executionTypes.create(definition, id)) };
    },
    async listExecutionTypes() {
      return { executionTypes: (await d.executionTypes.list()).map(toExecutionType) };
    },
    async getExecutionType(req) {
      return { executionType: toExecutionType(await d.executionTypes.get(req.name)) };
    },
    async deleteExecutionType(req) {
      await d.executionTypes.delete(req.name);
      return {};
    },
    async createEvent(req) {
      const event = req.event ?? create(EventSchema);
      const set = (field: keyof typeof EventSchema.field) => isFieldSet(event, EventSchema.field[field]);
      await d.lineage.record({
        ...(set("artifactId") && { artifactId: event.artifactId }),
        ...(set("executionId") && { executionId: event.executionId }),
        type: event.type,
        ...(set("millisecondsSinceEpoch") && { millisecondsSinceEpoch: event.millisecondsSinceEpoch }),
        ...(event.path && { path: event.path }),
      });
      return {};
    },
    async listEvents(req) {
      const view = await d.lineage.eventsOf(req.name);
      return {
        events: view.events.map(toEvent),
        artifacts: byId(view.artifacts, toArtifact),
        executions: byId(view.executions, toExecution),
      };
    },
  };
}
