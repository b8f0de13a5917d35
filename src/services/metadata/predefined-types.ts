// The kubeflow.org/alpha types the original server registered from its JSON schemas, so that
// clients (the Kubeflow Metadata SDK and UI) find them on a fresh server.
import { PropertyType } from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import type { TypeRegistry } from "./type-registry.js";

const strings = (...names: string[]) => Object.fromEntries(names.map((name) => [name, PropertyType.STRING]));
const common = ["name", "description", "owner", "create_time"];

export const predefinedArtifactTypes = [
  { name: "kubeflow.org/alpha/model", properties: strings(...common, "version", "model_type", "__ALL_META__") },
  { name: "kubeflow.org/alpha/data_set", properties: strings(...common, "version", "query", "__ALL_META__") },
  {
    name: "kubeflow.org/alpha/metrics",
    properties: strings(...common, "version", "model_id", "data_set_id", "metrics_type", "__ALL_META__"),
  },
];

export const predefinedExecutionTypes = [
  { name: "kubeflow.org/alpha/execution", properties: strings(...common, "executable_id", "__ALL_META__") },
];

/** Idempotent, in a fixed order; a stored type that gained properties through PATCH is kept. */
export async function registerPredefinedTypes(artifactTypes: TypeRegistry, executionTypes: TypeRegistry): Promise<void> {
  for (const type of predefinedArtifactTypes) await artifactTypes.ensure(type);
  for (const type of predefinedExecutionTypes) await executionTypes.ensure(type);
}
