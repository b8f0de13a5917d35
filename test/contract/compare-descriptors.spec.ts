// The comparison must notice every kind of difference: each case breaks one fact in a copy of
// the contract and expects the matching report.
import { describe, expect, it } from "vitest";
import {
  compareContract,
  loadGeneratedRegistry,
  loadWireContract,
  type ContractField,
  type WireContract,
} from "./compare-descriptors.js";

const contract = loadWireContract();
const registry = await loadGeneratedRegistry();
// A real difference in our protos fails the first test (and wire-contract.spec.ts), not every case.
const baseline = new Set(compareContract(contract, registry));

function field(c: WireContract, message: string, name: string): ContractField {
  const found = c.messages[message]?.fields.find((f) => f.name === name);
  if (!found) throw new Error(`no ${message}.${name} in the contract`);
  return found;
}

function rpc(c: WireContract, service: string, name: string) {
  const found = c.services[service]?.find((r) => r.name === name);
  if (!found) throw new Error(`no ${service}.${name} in the contract`);
  return found;
}

// [what changes, how, the expected report, optionally only the report lines starting with this]
const cases: [string, (c: WireContract) => void, string[], string?][] = [
  ["field number", (c) => { field(c, "api.Experiment", "created_at").number = 5; },
    ["api.Experiment.created_at: number 4, contract 5"]],
  ["field type", (c) => { field(c, "api.Experiment", "id").type = "int64"; },
    ["api.Experiment.id: type string, contract int64"]],
  ["message type", (c) => { field(c, "api.Experiment", "created_at").type = "google.protobuf.Duration"; },
    ["api.Experiment.created_at: type google.protobuf.Timestamp, contract google.protobuf.Duration"]],
  ["repeated", (c) => { delete field(c, "api.ListExperimentsResponse", "experiments").repeated; },
    ["api.ListExperimentsResponse.experiments: repeated true, contract false"]],
  ["map key type", (c) => { field(c, "api.ListEventsResponse", "artifacts").keyType = "string"; },
    ["api.ListEventsResponse.artifacts: map key type int64, contract string"]],
  ["map value type", (c) => { field(c, "ml_metadata.Artifact", "properties").type = "string"; },
    ["ml_metadata.Artifact.properties: type ml_metadata.Value, contract string"]],
  ["not a map", (c) => {
    const f = field(c, "ml_metadata.ArtifactType", "properties");
    delete f.map;
    delete f.keyType;
  }, ["ml_metadata.ArtifactType.properties: map true, contract false"]],
  ["oneof name", (c) => { field(c, "api.Trigger", "cron_schedule").oneof = "schedule"; },
    ["api.Trigger.cron_schedule: oneof trigger, contract schedule"]],
  ["not in a oneof", (c) => { delete field(c, "ml_metadata.Value", "int_value").oneof; },
    ["ml_metadata.Value.int_value: oneof value, contract undefined"]],
  ["missing field", (c) => { c.messages["api.Experiment"]!.fields.push({ name: "owner", number: 9, type: "string" }); },
    ["api.Experiment.owner: field missing (number 9)"]],
  ["our field takes a contract number", (c) => { field(c, "api.Experiment", "description").name = "summary"; }, [
    "api.Experiment.summary: field missing (number 3)",
    "api.Experiment.description: number 3 belongs to summary in the contract",
  ]],
  ["missing message", (c) => { c.messages["api.Missing"] = { file: "backend/api/run.proto", fields: [] }; },
    ["api.Missing: message missing"]],
  ["proto2 file", (c) => { c.syntax["backend/api/filter.proto"] = "proto2"; }, [
    "api.IntValues: backend/api/filter.proto is proto2, our kfp/filter.proto is proto3",
    "api.IntValues.values: packed true, proto2 default false",
  ], "api.IntValues"],
  ["proto3 file", (c) => { c.syntax["ml_metadata/proto/metadata_store.proto"] = "proto3"; },
    ["ml_metadata.Artifact: ml_metadata/proto/metadata_store.proto is proto3, our ml_metadata/metadata_store.proto is proto2"], "ml_metadata.Artifact:"],
  ["unknown field key", (c) => { Object.assign(field(c, "api.Experiment", "id"), { json_name: "ID" }); },
    ['api.Experiment.id: contract key "json_name" is not compared; extend compare-descriptors.ts']],
  ["enum value number", (c) => { c.enums["api.Job.Mode"]!.DISABLED = 3; },
    ["api.Job.Mode.DISABLED: number 2, contract 3"]],
  ["missing enum value", (c) => { c.enums["api.Job.Mode"]!.PAUSED = 3; },
    ["api.Job.Mode.PAUSED: value missing (number 3)"]],
  ["our enum value takes a contract number", (c) => { c.enums["api.Relationship"] = { UNKNOWN_RELATIONSHIP: 0, OWNS: 1, CREATOR: 2 }; }, [
    "api.Relationship.OWNS: value missing (number 1)",
    "api.Relationship.OWNER: number 1 belongs to OWNS in the contract",
  ]],
  ["missing enum", (c) => { c.enums["api.Missing"] = { A: 0 }; }, ["api.Missing: enum missing"]],
  ["rpc input", (c) => { rpc(c, "api.RunService", "GetRun").input = "api.GetJobRequest"; },
    ["api.RunService.GetRun: input api.GetRunRequest, contract api.GetJobRequest"]],
  ["rpc output", (c) => { rpc(c, "api.RunService", "GetRun").output = "api.Run"; },
    ["api.RunService.GetRun: output api.RunDetail, contract api.Run"]],
  ["http path", (c) => { rpc(c, "api.RunService", "GetRun").http = { get: "/apis/v1beta1/runs/{id}" }; },
    ["api.RunService.GetRun: http GET /apis/v1beta1/runs/{run_id}, contract GET /apis/v1beta1/runs/{id}"]],
  ["http verb", (c) => { rpc(c, "api.RunService", "CreateRun").http = { put: "/apis/v1beta1/runs", body: "run" }; },
    ["api.RunService.CreateRun: http POST /apis/v1beta1/runs body=run, contract PUT /apis/v1beta1/runs body=run"]],
  ["http body", (c) => { rpc(c, "api.RunService", "CreateRun").http = { post: "/apis/v1beta1/runs", body: "*" }; },
    ["api.RunService.CreateRun: http POST /apis/v1beta1/runs body=run, contract POST /apis/v1beta1/runs body=*"]],
  ["additional binding dropped", (c) => { delete rpc(c, "api.MetadataService", "ListArtifacts").http!.additional_bindings; }, [
    "api.MetadataService.ListArtifacts: http GET /api/v1alpha1/{name=artifact_types/**}/artifacts [+ GET /api/v1alpha1/artifacts]," +
      " contract GET /api/v1alpha1/{name=artifact_types/**}/artifacts",
  ]],
  ["additional bindings as a list", (c) => {
    rpc(c, "api.MetadataService", "ListArtifacts").http!.additional_bindings = [{ get: "/api/v1alpha1/artifacts" }, { get: "/x" }];
  }, [
    "api.MetadataService.ListArtifacts: http GET /api/v1alpha1/{name=artifact_types/**}/artifacts [+ GET /api/v1alpha1/artifacts]," +
      " contract GET /api/v1alpha1/{name=artifact_types/**}/artifacts [+ GET /api/v1alpha1/artifacts] [+ GET /x]",
  ]],
  ["unknown http key", (c) => { rpc(c, "api.RunService", "GetRun").http!.selector = "api.RunService.GetRun"; },
    ['api.RunService.GetRun: contract http key "selector" is not compared; extend compare-descriptors.ts']],
  ["rpc order", (c) => {
    const rpcs = c.services["api.ExperimentService"]!;
    [rpcs[0], rpcs[1]] = [rpcs[1]!, rpcs[0]!];
  }, [
    "api.ExperimentService: rpc order CreateExperiment, GetExperiment, ListExperiment, DeleteExperiment;" +
      " contract GetExperiment, CreateExperiment, ListExperiment, DeleteExperiment",
  ]],
  ["missing rpc", (c) => { c.services["api.RunService"]!.push({ name: "RetryRun", input: "api.GetRunRequest", output: "api.RunDetail" }); },
    ["api.RunService.RetryRun: rpc missing"]],
  ["our extra rpc takes a contract route", (c) => {
    rpc(c, "api.MetadataService", "CreateArtifactType").http = { patch: "/api/v1alpha1/artifact_types", body: "artifact_type" };
  }, [
    "api.MetadataService.CreateArtifactType: http POST /api/v1alpha1/artifact_types body=artifact_type," +
      " contract PATCH /api/v1alpha1/artifact_types body=artifact_type",
    "api.MetadataService.UpdateArtifactType: extra rpc binds PATCH /api/v1alpha1/artifact_types, a route of the contract",
  ]],
  ["missing service", (c) => { c.services["api.MissingService"] = []; }, ["api.MissingService: service missing"]],
];

describe("compareContract", () => {
  it("finds no difference in the contract as it is", () => {
    expect([...baseline]).toEqual([]);
  });

  it.each(cases)("reports a changed %s", (_name, mutate, expected, scope = "") => {
    const changed = structuredClone(contract);
    mutate(changed);
    const report = compareContract(changed, registry).filter((line) => !baseline.has(line) && line.startsWith(scope));
    expect(report).toEqual(expected);
  });
});
