// The OpenAPI document is derived from the same routes the gateway serves.
import { describe, expect, it } from "vitest";
import { ExperimentService } from "../../gen/proto/kfp/experiment_pb.js";
import { RunService } from "../../gen/proto/kfp/run_pb.js";
import { MetadataService } from "../../gen/proto/metadata/service_pb.js";
import { openApiDocument } from "../../src/transcoding/openapi.js";
import { RouteTable } from "../../src/transcoding/route-table.js";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const doc = openApiDocument(new RouteTable([MetadataService, ExperimentService, RunService]).routes, { title: "t", version: "1" }) as any;

describe("openApiDocument", () => {
  it("has one operation per binding, additional bindings numbered", () => {
    expect(doc.paths["/api/v1alpha1/artifact_types/{name}"].get.operationId).toBe("GetArtifactType");
    expect(doc.paths["/api/v1alpha1/artifact_types/{name}/artifacts"].get.operationId).toBe("ListArtifacts");
    expect(doc.paths["/api/v1alpha1/artifacts"].get.operationId).toBe("ListArtifacts2");
    expect(doc.paths["/api/v1alpha1/artifact_types"].patch.operationId).toBe("UpdateArtifactType");
    expect(doc.paths["/apis/v1beta1/runs/{id}:archive"].post.operationId).toBe("ArchiveRun");
    expect(doc.paths["/apis/v1beta1/experiments"].get.operationId).toBe("ListExperiment");
    expect(doc.paths["/api/v1alpha1/execution_types/{name}"].get.operationId).toBe("GetExecutionType");
    expect(doc.paths["/api/v1alpha1/events/artifacts/{name}"].get.operationId).toBe("ListEvents2");
  });

  it("declares path, query and body parameters", () => {
    const listRuns = doc.paths["/apis/v1beta1/runs"].get;
    const query = Object.fromEntries(listRuns.parameters.map((p: { name: string; schema: unknown }) => [p.name, p.schema]));
    expect(query["page_size"]).toEqual({ type: "integer", format: "int32" });
    expect(query["resource_reference_key.type"]).toEqual({ type: "string", enum: ["UNKNOWN_RESOURCE_TYPE", "EXPERIMENT", "JOB"] });
    const createArtifact = doc.paths["/api/v1alpha1/artifact_types/{parent}/artifacts"].post;
    expect(createArtifact.parameters).toEqual([{ name: "parent", in: "path", required: true, schema: { type: "string" } }]);
    expect(createArtifact.requestBody.content["application/json"].schema).toEqual({ $ref: "#/components/schemas/ml_metadata.Artifact" });
    const getArtifact = doc.paths["/api/v1alpha1/artifact_types/{name}/artifacts/{name_2}"].get;
    expect(getArtifact.parameters.map((p: { name: string }) => p.name)).toEqual(["name", "name_2"]);
    expect(doc.paths["/api/v1alpha1/artifacts"].get.parameters.map((p: { name: string }) => p.name)).toEqual(["name"]);
  });

  it("describes messages with proto field names and int64 as strings", () => {
    const artifact = doc.components.schemas["ml_metadata.Artifact"].properties;
    expect(Object.keys(artifact)).toEqual(["id", "type_id", "uri", "properties", "custom_properties"]);
    expect(artifact.id).toEqual({ type: "string", format: "int64" });
    expect(artifact.properties).toEqual({ type: "object", additionalProperties: { $ref: "#/components/schemas/ml_metadata.Value" } });
    expect(doc.components.schemas["api.Run"].properties.created_at).toEqual({ type: "string", format: "date-time" });
    expect(doc.paths["/api/v1alpha1/events"].post.responses.default.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/apiStatus",
    });
  });
});
