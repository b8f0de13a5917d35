// The pipelines flows over native gRPC (a proto-loader client built from our .proto files, as
// clients generated from the original files are) and over Connect-generated clients.
import * as grpc from "@grpc/grpc-js";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExperimentService } from "../../gen/proto/kfp/experiment_pb.js";
import { JobService } from "../../gen/proto/kfp/job_pb.js";
import { PipelineService } from "../../gen/proto/kfp/pipeline_pb.js";
import { PipelineUploadService } from "../../gen/proto/kfp/pipeline_upload_pb.js";
import { ResourceType, Relationship } from "../../gen/proto/kfp/resource_reference_pb.js";
import { ReportRunMetricsResponse_ReportRunMetricResult_Status as MetricStatus, RunService } from "../../gen/proto/kfp/run_pb.js";
import { databases, grpcCall, startTestServer, type TestServer } from "../helpers/server.js";
import { readSingleFile } from "../../src/engine/local/artifact-archive.js";
import { fileServer, readFixture, uploadFile, workflowFile } from "./fixtures.js";

describe.each(databases)("pipelines over gRPC and Connect on %s", (database) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ database });
  });
  afterAll(async () => {
    await t.close();
  });

  it("runs the experiment, upload, run and job flow over native gRPC", async () => {
    const experiments = t.grpc("api.ExperimentService");
    const experiment = await grpcCall(experiments, "CreateExperiment", { experiment: { name: "grpc experiment" } });
    expect(experiment).toMatchObject({ name: "grpc experiment", id: expect.any(String) });
    expect((await grpcCall(experiments, "ListExperiment", { sort_by: "name" })).experiments.length).toBe(2);

    const pipeline = await grpcCall(t.grpc("api.PipelineUploadService"), "UploadPipeline", {
      file: readFixture(uploadFile("arguments-parameters.yaml")),
      file_name: "arguments-parameters.yaml",
      description: "uploaded over gRPC",
    });
    expect(pipeline).toMatchObject({ name: "arguments-parameters.yaml", description: "uploaded over gRPC" });
    const pipelines = t.grpc("api.PipelineService");
    expect((await grpcCall(pipelines, "GetTemplate", { id: pipeline.id })).template).toContain("param1");

    const runs = t.grpc("api.RunService");
    const reference = { key: { type: "EXPERIMENT", id: experiment.id }, relationship: "OWNER" };
    const detail = await grpcCall(runs, "CreateRun", {
      run: { name: "grpc run", pipeline_spec: { pipeline_id: pipeline.id, parameters: [{ name: "param2", value: "x" }] }, resource_references: [reference] },
    });
    expect(detail.run.resource_references).toEqual([reference]);
    const report = await grpcCall(runs, "ReportRunMetrics", {
      run_id: detail.run.id,
      metrics: [{ name: "accuracy", node_id: "node-1", number_value: 0.9, format: "PERCENTAGE" }],
    });
    expect(report.results.map((r: { status: string }) => r.status)).toEqual(["OK"]);
    const listed = await grpcCall(runs, "ListRuns", { resource_reference_key: { type: "EXPERIMENT", id: experiment.id } });
    expect(listed.runs[0].metrics).toEqual([expect.objectContaining({ name: "accuracy", node_id: "node-1", number_value: 0.9, format: "PERCENTAGE" })]);
    await grpcCall(runs, "TerminateRun", { run_id: detail.run.id });
    await grpcCall(runs, "DeleteRun", { id: detail.run.id });
    const gone = await grpcCall(runs, "GetRun", { run_id: detail.run.id }).catch((e: grpc.ServiceError) => e);
    expect((gone as grpc.ServiceError).code).toBe(grpc.status.NOT_FOUND);

    const jobs = t.grpc("api.JobService");
    const job = await grpcCall(jobs, "CreateJob", {
      job: {
        name: "grpc job",
        pipeline_spec: { pipeline_id: pipeline.id },
        resource_references: [reference],
        trigger: { cron_schedule: { cron: "0 30 14 * * ?" } },
        max_concurrency: "2",
        no_catchup: true,
      },
    });
    expect(job).toMatchObject({ enabled: true, status: "Enabled", no_catchup: true, trigger: { cron_schedule: { cron: "0 30 14 * * ?" } } });
    await grpcCall(jobs, "DisableJob", { id: job.id });
    expect((await grpcCall(jobs, "GetJob", { id: job.id })).enabled).toBe(false);
    await grpcCall(jobs, "DeleteJob", { id: job.id });
    await grpcCall(pipelines, "DeletePipeline", { id: pipeline.id });
    await grpcCall(experiments, "DeleteExperiment", { id: experiment.id });
  });

  /** The first step of a run, once the run has finished. */
  async function finishedPod(runId: string): Promise<{ id: string }> {
    for (let i = 0; i < 200; i++) {
      const detail = (await t.rest("GET", `/apis/v1beta1/runs/${runId}`)).body;
      const nodes = Object.values(JSON.parse(detail.pipeline_runtime.workflow_manifest).status?.nodes ?? {}) as { id: string; type: string }[];
      if (detail.run.finished_at) return nodes.find((n) => n.type === "Pod")!;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`run ${runId} did not finish`);
  }

  it("answers every RPC of the pipelines services over native gRPC", async () => {
    const called = new Set<string>();
    const call = (service: string, method: string, request: object) => {
      called.add(`${service}/${method}`);
      return grpcCall(t.grpc(service), method, request);
    };
    const files = await fileServer({ "hello.yaml": readFixture(workflowFile("hello-world.yaml")) });
    try {
      const experiment = await call("api.ExperimentService", "CreateExperiment", { experiment: { name: "every rpc" } });
      expect((await call("api.ExperimentService", "GetExperiment", { id: experiment.id })).name).toBe("every rpc");
      await call("api.ExperimentService", "ListExperiment", {});
      const pipeline = await call("api.PipelineService", "CreatePipeline", { pipeline: { url: { pipeline_url: `${files.url}/hello.yaml` } } });
      expect(pipeline.name).toBe("hello.yaml");
      expect((await call("api.PipelineService", "GetPipeline", { id: pipeline.id })).id).toBe(pipeline.id);
      expect((await call("api.PipelineService", "ListPipelines", { filter: JSON.stringify({ predicates: [{ key: "name", op: "EQUALS", string_value: "hello.yaml" }] }) })).pipelines).toHaveLength(1);
      expect((await call("api.PipelineService", "GetTemplate", { id: pipeline.id })).template).toContain("whalesay");
      const uploaded = await call("api.PipelineUploadService", "UploadPipeline", { file: readFixture(workflowFile("hello-world.yaml")), file_name: "again.yaml" });
      await call("api.PipelineService", "DeletePipeline", { id: uploaded.id });

      const reference = { key: { type: "EXPERIMENT", id: experiment.id }, relationship: "OWNER" };
      const { run } = await call("api.RunService", "CreateRun", { run: { name: "r", pipeline_spec: { pipeline_id: pipeline.id }, resource_references: [reference] } });
      await call("api.RunService", "ArchiveRun", { id: run.id });
      expect((await call("api.RunService", "GetRun", { run_id: run.id })).run.storage_state).toBe("STORAGESTATE_ARCHIVED");
      await call("api.RunService", "UnarchiveRun", { id: run.id });
      await call("api.RunService", "ListRuns", { sort_by: "name desc" });
      await call("api.RunService", "ReportRunMetrics", { run_id: run.id, metrics: [] });
      // The run executes (and fails: cowsay is not installed); its step's logs are an artifact.
      const pod = await finishedPod(run.id);
      const artifact = await call("api.RunService", "ReadArtifact", { run_id: run.id, node_id: pod.id, artifact_name: "main-logs" });
      expect(await readSingleFile(new Uint8Array(artifact.data))).toBeDefined();
      const stopped = await call("api.RunService", "CreateRun", { run: { name: "t", pipeline_spec: { workflow_manifest: readFixture(workflowFile("long-running.yaml")).toString() } } });
      await call("api.RunService", "TerminateRun", { run_id: stopped.run.id });
      await call("api.RunService", "DeleteRun", { id: run.id });

      const job = await call("api.JobService", "CreateJob", { job: { name: "j", pipeline_spec: { pipeline_id: pipeline.id }, mode: "DISABLED" } });
      expect(job).toMatchObject({ enabled: false, mode: "DISABLED", status: "Disabled" });
      await call("api.JobService", "EnableJob", { id: job.id });
      await call("api.JobService", "DisableJob", { id: job.id });
      expect((await call("api.JobService", "GetJob", { id: job.id })).enabled).toBe(false);
      // The job went to the Default experiment; an empty repeated field is absent on the wire.
      expect((await call("api.JobService", "ListJobs", { resource_reference_key: { type: "EXPERIMENT", id: experiment.id } })).jobs ?? []).toHaveLength(0);
      await call("api.JobService", "DeleteJob", { id: job.id });
      await call("api.ExperimentService", "DeleteExperiment", { id: experiment.id });
    } finally {
      await files.close();
    }
    const every = [ExperimentService, PipelineService, PipelineUploadService, RunService, JobService].flatMap((s) =>
      s.methods.map((m) => `${s.typeName}/${m.name}`),
    );
    expect([...called].sort()).toEqual(every.sort());
  });

  it("maps pipelines errors to gRPC codes", async () => {
    const bad = await grpcCall(t.grpc("api.JobService"), "CreateJob", {
      job: { name: "x", pipeline_spec: { workflow_manifest: readFixture(workflowFile("hello-world.yaml")).toString() }, trigger: { cron_schedule: { cron: "not cron" } } },
    }).catch((e: grpc.ServiceError) => e);
    expect((bad as grpc.ServiceError).code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((bad as grpc.ServiceError).details).toMatch(/cron/);
  });

  it.each(["connect-json", "connect-binary", "grpc-web"] as const)("runs the flow through Connect clients over %s", async (transport) => {
    const experiments = t.client(ExperimentService, transport);
    const experiment = await experiments.createExperiment({ experiment: { name: `connect ${transport}` } });
    const pipeline = await t.client(PipelineUploadService, transport).uploadPipeline({
      file: readFixture(workflowFile("hello-world.yaml")),
      fileName: `hello-${transport}.yaml`,
    });
    expect((await t.client(PipelineService, transport).getPipeline({ id: pipeline.id })).name).toBe(`hello-${transport}.yaml`);
    const runs = t.client(RunService, transport);
    const { run } = await runs.createRun({
      run: {
        name: "connect run",
        pipelineSpec: { pipelineId: pipeline.id },
        resourceReferences: [{ key: { type: ResourceType.EXPERIMENT, id: experiment.id }, relationship: Relationship.OWNER }],
      },
    });
    const report = await runs.reportRunMetrics({
      runId: run!.id,
      metrics: [
        { name: "loss", nodeId: "n", value: { case: "numberValue", value: 0.25 } },
        { name: "loss", nodeId: "n", value: { case: "numberValue", value: 0.5 } },
        { name: "Bad_Name", nodeId: "n" },
      ],
    });
    expect(report.results.map((r) => r.status)).toEqual([MetricStatus.OK, MetricStatus.DUPLICATE_REPORTING, MetricStatus.INVALID_ARGUMENT]);
    expect((await runs.getRun({ runId: run!.id })).run?.metrics.map((m) => m.value)).toEqual([{ case: "numberValue", value: 0.25 }]);
    const jobs = t.client(JobService, transport);
    const job = await jobs.createJob({
      job: { name: "connect job", pipelineSpec: { pipelineId: pipeline.id }, trigger: { trigger: { case: "periodicSchedule", value: { intervalSecond: 60n } } } },
    });
    expect(job.resourceReferences[0]?.key?.type).toBe(ResourceType.EXPERIMENT);
    const err = await jobs.getJob({ id: "missing" }).catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.NotFound);
  });
});
