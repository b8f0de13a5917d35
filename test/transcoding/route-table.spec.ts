import { create, createFileRegistry, type DescService, type MessageInitShape } from "@bufbuild/protobuf";
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { HttpRuleSchema } from "../../gen/proto/google/api/http_pb.js";
import { ExperimentService } from "../../gen/proto/kfp/experiment_pb.js";
import { JobService } from "../../gen/proto/kfp/job_pb.js";
import { PipelineService } from "../../gen/proto/kfp/pipeline_pb.js";
import { RunService } from "../../gen/proto/kfp/run_pb.js";
import { MetadataService } from "../../gen/proto/metadata/service_pb.js";
import { listHttpBindings, RouteTable } from "../../src/transcoding/route-table.js";
import { splitPath } from "../../src/transcoding/path-template.js";
import { methodOptions } from "./things-service.js";

const table = new RouteTable([MetadataService, RunService, ExperimentService, PipelineService, JobService]);
const lookup = (method: string, path: string) => table.lookup(method, splitPath(path));

describe("RouteTable over the real services", () => {
  it.each([
    // ListArtifactTypes is declared before GetArtifactType, whose {name=artifact_types/**} also matches
    ["GET", "/api/v1alpha1/artifact_types", "ListArtifactTypes", {}],
    ["GET", "/api/v1alpha1/artifact_types/a/b/artifacts", "ListArtifacts", { name: "artifact_types/a/b" }],
    ["GET", "/api/v1alpha1/artifact_types/a/b/artifacts/7", "GetArtifact", { name: "artifact_types/a/b/artifacts/7" }],
    ["GET", "/api/v1alpha1/artifact_types/a/b", "GetArtifactType", { name: "artifact_types/a/b" }],
    ["GET", "/api/v1alpha1/artifact_types/kubeflow.org/alpha/model", "GetArtifactType", { name: "artifact_types/kubeflow.org/alpha/model" }],
    ["GET", "/api/v1alpha1/artifact_types/kubeflow.org%2Falpha%2Fmodel/artifacts", "ListArtifacts", { name: "artifact_types/kubeflow.org/alpha/model" }],
    ["GET", "/api/v1alpha1/artifacts", "ListArtifacts", {}],
    ["POST", "/api/v1alpha1/artifact_types/a/b/artifacts", "CreateArtifact", { parent: "artifact_types/a/b" }],
    ["POST", "/api/v1alpha1/artifact_types", "CreateArtifactType", {}],
    ["PATCH", "/api/v1alpha1/artifact_types", "UpdateArtifactType", {}],
    ["DELETE", "/api/v1alpha1/artifact_types/a/b/artifacts/7", "DeleteArtifact", { name: "artifact_types/a/b/artifacts/7" }],
    ["DELETE", "/api/v1alpha1/artifact_types/a/b", "DeleteArtifactType", { name: "artifact_types/a/b" }],
    ["GET", "/api/v1alpha1/execution_types", "ListExecutionTypes", {}],
    ["GET", "/api/v1alpha1/execution_types/x/executions/3", "GetExecution", { name: "execution_types/x/executions/3" }],
    ["GET", "/api/v1alpha1/executions", "ListExecutions", {}],
    ["GET", "/api/v1alpha1/events/executions/5", "ListEvents", { name: "executions/5" }],
    ["GET", "/api/v1alpha1/events/artifacts/5", "ListEvents", { name: "artifacts/5" }],
    ["POST", "/api/v1alpha1/events", "CreateEvent", {}],
    ["POST", "/apis/v1beta1/runs", "CreateRun", {}],
    ["GET", "/apis/v1beta1/runs", "ListRuns", {}],
    ["GET", "/apis/v1beta1/runs/r1", "GetRun", { run_id: "r1" }],
    ["DELETE", "/apis/v1beta1/runs/r1", "DeleteRun", { id: "r1" }],
    ["POST", "/apis/v1beta1/runs/abc:archive", "ArchiveRun", { id: "abc" }],
    // A template without a verb takes the colon into the value.
    ["GET", "/apis/v1beta1/runs/abc:archive", "GetRun", { run_id: "abc:archive" }],
    ["POST", "/apis/v1beta1/runs/abc:unarchive", "UnarchiveRun", { id: "abc" }],
    ["POST", "/apis/v1beta1/runs/abc:reportMetrics", "ReportRunMetrics", { run_id: "abc" }],
    ["POST", "/apis/v1beta1/runs/abc/terminate", "TerminateRun", { run_id: "abc" }],
    ["GET", "/apis/v1beta1/runs/r1/nodes/n1/artifacts/a1:read", "ReadArtifact", { run_id: "r1", node_id: "n1", artifact_name: "a1" }],
    ["GET", "/apis/v1beta1/experiments/e1", "GetExperiment", { id: "e1" }],
    ["GET", "/apis/v1beta1/pipelines/p1/templates", "GetTemplate", { id: "p1" }],
    ["POST", "/apis/v1beta1/jobs/j1/enable", "EnableJob", { id: "j1" }],
  ])("%s %s → %s", (method, path, rpc, pathParams) => {
    const found = lookup(method, path);
    expect(found.kind).toBe("match");
    if (found.kind !== "match") return;
    expect(found.route.method.name).toBe(rpc);
    expect(found.pathParams).toEqual(pathParams);
  });

  it.each([
    ["GET", "/nope"],
    ["GET", "/api/v1alpha1"],
    ["GET", "/api/v1alpha1/artifact_typesx"],
    ["POST", "/apis/v1beta1/runs/a/b/c"],
    ["GET", "/apis/v1beta2/runs"],
  ])("%s %s → not found", (method, path) => {
    expect(lookup(method, path)).toEqual({ kind: "notFound" });
  });

  it.each([
    ["PATCH", "/apis/v1beta1/runs/r1", ["GET", "DELETE"]],
    // DELETE too: {name=artifact_types/**} matches with ** taking no segment
    ["PUT", "/api/v1alpha1/artifact_types", ["POST", "GET", "DELETE", "PATCH"]],
    ["DELETE", "/apis/v1beta1/runs", ["POST", "GET"]],
    ["GET", "/apis/v1beta1/jobs/j1/enable", ["POST"]],
    ["HEAD", "/apis/v1beta1/runs", ["POST", "GET"]],
  ])("%s %s → method not allowed", (method, path, allow) => {
    expect(lookup(method, path)).toEqual({ kind: "methodNotAllowed", allow });
  });

  it("lists bindings in routing order, additional bindings after their primary", () => {
    const bindings = listHttpBindings([MetadataService]).map((b) => `${b.method.name} ${b.httpMethod} ${b.template} ${b.body}`);
    expect(bindings.slice(0, 4)).toEqual([
      "CreateArtifact POST /api/v1alpha1/{parent=artifact_types/**}/artifacts artifact",
      "GetArtifact GET /api/v1alpha1/{name=artifact_types/**/artifacts/*} ",
      "ListArtifacts GET /api/v1alpha1/{name=artifact_types/**}/artifacts ",
      "ListArtifacts GET /api/v1alpha1/artifacts ",
    ]);
    expect(bindings.filter((b) => b.startsWith("ListEvents"))).toEqual([
      "ListEvents GET /api/v1alpha1/events/{name=executions/*} ",
      "ListEvents GET /api/v1alpha1/events/{name=artifacts/*} ",
    ]);
    expect(listHttpBindings([RunService]).find((b) => b.method.name === "ReportRunMetrics")?.body).toBe("*");
  });

  it("records the fields the path and body bind", () => {
    const route = table.routes.find((r) => r.method.name === "CreateArtifact");
    expect(route?.bodyField?.name).toBe("artifact");
    expect([...(route?.boundFields ?? [])]).toEqual(["parent", "artifact"]);
  });
});

describe("RouteTable rule validation", () => {
  // A file with one service whose method M(Req) carries the given rule.
  function serviceWith(rule: MessageInitShape<typeof HttpRuleSchema>): DescService {
    const file = create(FileDescriptorProtoSchema, {
      name: "rules.proto",
      package: "test",
      syntax: "proto3",
      messageType: [
        {
          name: "Req",
          field: [
            { name: "id", number: 1, type: FieldDescriptorProto_Type.STRING, label: FieldDescriptorProto_Label.OPTIONAL },
            { name: "ids", number: 2, type: FieldDescriptorProto_Type.STRING, label: FieldDescriptorProto_Label.REPEATED },
          ],
        },
      ],
      service: [{ name: "S", method: [{ name: "M", inputType: ".test.Req", outputType: ".test.Req", options: methodOptions(rule) }] }],
    });
    return createFileRegistry(file, () => undefined).getService("test.S") as DescService;
  }

  it("accepts a custom verb and additional bindings", () => {
    const service = serviceWith({
      pattern: { case: "custom", value: { kind: "search", path: "/v1/{id}" } },
      additionalBindings: [{ pattern: { case: "put", value: "/v1/x/{id}" }, body: "*" }],
    });
    expect(listHttpBindings([service]).map((b) => [b.httpMethod, b.template, b.body])).toEqual([
      ["SEARCH", "/v1/{id}", ""],
      ["PUT", "/v1/x/{id}", "*"],
    ]);
  });

  it.each([
    [{ pattern: { case: "get", value: "/v1/{nope}" } }, /\{nope\} is not a singular scalar field of test.Req/],
    [{ pattern: { case: "get", value: "/v1/{ids}" } }, /\{ids\} is not a singular scalar field/],
    [{ pattern: { case: "get", value: "/v1/{id.x}" } }, /\{id.x\} is not a singular scalar field/],
    [{ pattern: { case: "post", value: "/v1" }, body: "nope" }, /body "nope" is not a field of test.Req/],
    [{ pattern: { case: "get", value: "/v1/{id" } }, /invalid path template/],
    [{ pattern: { case: "get", value: "/v1" }, responseBody: "id" }, /response_body is not supported/],
    [{ body: "*" }, /http rule without a pattern/],
  ] as [MessageInitShape<typeof HttpRuleSchema>, RegExp][])("rejects %j", (rule, error) => {
    expect(() => new RouteTable([serviceWith(rule)])).toThrow(error);
  });
});
