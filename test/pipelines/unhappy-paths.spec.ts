// What the pipelines API answers to requests it cannot serve: always apiStatus with the right
// code, never a 500.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startTestServer, type RestResponse, type TestServer } from "../helpers/server.js";
import { readFixture, upload, uploadFile, workflowFile } from "./fixtures.js";

const apis = "/apis/v1beta1";

function expectApiStatus(res: RestResponse, status: number, code: number, message?: RegExp) {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ code, error: expect.any(String), message: expect.any(String) });
  expect(res.body.details[0]["@type"]).toBe("type.googleapis.com/api.Error");
  if (message) expect(res.body.message).toMatch(message);
}

describe.each(databases)("pipelines API unhappy paths on %s", (database) => {
  let t: TestServer;
  let pipelineId: string;
  let runId: string;
  const helloManifest = readFixture(workflowFile("hello-world.yaml")).toString();

  beforeAll(async () => {
    t = await startTestServer({ database });
    pipelineId = (await upload(t.server.httpUrl, "arguments.yaml", readFixture(uploadFile("arguments-parameters.yaml")))).body.id;
    runId = (await t.rest("POST", `${apis}/runs`, { name: "r", pipeline_spec: { pipeline_id: pipelineId } })).body.run.id;
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ["GET", "/experiments/missing"],
    ["DELETE", "/experiments/missing"],
    ["GET", "/pipelines/missing"],
    ["DELETE", "/pipelines/missing"],
    ["GET", "/pipelines/missing/templates"],
    ["GET", "/runs/missing"],
    ["DELETE", "/runs/missing"],
    ["POST", "/runs/missing:archive"],
    ["POST", "/runs/missing:unarchive"],
    ["POST", "/runs/missing/terminate"],
    ["POST", "/runs/missing:reportMetrics"],
    ["GET", "/runs/missing/nodes/n/artifacts/a:read"],
    ["GET", "/jobs/missing"],
    ["DELETE", "/jobs/missing"],
    ["POST", "/jobs/missing/enable"],
    ["POST", "/jobs/missing/disable"],
  ])("answers 404 to %s %s", async (method, path) => {
    expectApiStatus(await t.rest(method, apis + path, method === "POST" ? {} : undefined), 404, 5, /missing/);
  });

  it.each([
    ["a missing body", undefined, /run/],
    ["no name", { pipeline_spec: { pipeline_id: "x" } }, /name/],
    ["no pipeline spec", { name: "r" }, /pipeline_spec/],
    ["both pipeline id and manifest", { name: "r", pipeline_spec: { pipeline_id: "x", workflow_manifest: "{}" } }, /exactly one/],
    ["a manifest that is not a workflow", { name: "r", pipeline_spec: { workflow_manifest: "apiVersion: v1\nkind: Pod" } }, /argo|Workflow/i],
    ["a manifest that does not parse", { name: "r", pipeline_spec: { workflow_manifest: "{not: [json" } }, /workflow/i],
    ["an unknown parameter", () => ({ name: "r", pipeline_spec: { pipeline_id: pipelineId, parameters: [{ name: "nope", value: "1" }] } }), /nope/],
    ["an UNKNOWN reference type", { name: "r", pipeline_spec: { workflow_manifest: helloManifest }, resource_references: [{ key: { id: "x" }, relationship: "OWNER" }] }, /reference/],
  ])("refuses a run with %s (400)", async (_what, body, message) => {
    const payload = typeof body === "function" ? body() : body;
    expectApiStatus(await t.rest("POST", `${apis}/runs`, payload), 400, 3, message);
  });

  it("answers 404 for a run in a missing experiment before creating anything", async () => {
    const before = (await t.rest("GET", `${apis}/runs`)).body.total_size;
    const res = await t.rest("POST", `${apis}/runs`, {
      name: "r",
      pipeline_spec: { workflow_manifest: "not even yaml: [" },
      resource_references: [{ key: { type: "EXPERIMENT", id: "missing-experiment" }, relationship: "OWNER" }],
    });
    expectApiStatus(res, 404, 5, /missing-experiment/);
    expect((await t.rest("GET", `${apis}/runs`)).body.total_size).toBe(before);
  });

  it("terminates a running run, and refuses a finished one with 400 FailedPrecondition", async () => {
    const manifest = readFixture(workflowFile("long-running.yaml")).toString();
    const other = (await t.rest("POST", `${apis}/runs`, { name: "t", pipeline_spec: { workflow_manifest: manifest } })).body.run.id;
    expect((await t.rest("POST", `${apis}/runs/${other}/terminate`)).status).toBe(200);
    const ended = (await t.rest("GET", `${apis}/runs/${other}`)).body.run.status;
    expect(ended).toBe("Failed");
    expectApiStatus(await t.rest("POST", `${apis}/runs/${other}/terminate`), 400, 9, /already finished/);
  });

  it.each([
    ["a bad cron", { trigger: { cron_schedule: { cron: "every tuesday" } } }, /cron/],
    ["an empty cron", { trigger: { cron_schedule: { cron: "" } } }, /cron/],
    ["a zero period", { trigger: { periodic_schedule: { interval_second: "0" } } }, /interval_second/],
    ["max_concurrency 11", { max_concurrency: "11" }, /max_concurrency/],
    ["negative max_concurrency", { max_concurrency: "-1" }, /max_concurrency/],
    ["an end before the start", { trigger: { periodic_schedule: { interval_second: "5", start_time: "2026-01-02T00:00:00Z", end_time: "2026-01-01T00:00:00Z" } } }, /end_time/],
    ["a JOB reference", { resource_references: [{ key: { type: "JOB", id: "x" }, relationship: "CREATOR" }] }, /reference/],
  ])("refuses a job with %s (400)", async (_what, extra, message) => {
    const res = await t.rest("POST", `${apis}/jobs`, { name: "j", pipeline_spec: { workflow_manifest: helloManifest }, ...extra });
    expectApiStatus(res, 400, 3, message);
  });

  it("refuses a job in a missing experiment with 404", async () => {
    const res = await t.rest("POST", `${apis}/jobs`, {
      name: "j",
      pipeline_spec: { workflow_manifest: helloManifest },
      resource_references: [{ key: { type: "EXPERIMENT", id: "gone" }, relationship: "OWNER" }],
    });
    expectApiStatus(res, 404, 5);
  });

  it.each([
    ["an empty experiment name", "/experiments", {}, /name/],
    ["a pipeline without URL", "/pipelines", { name: "p" }, /URL/],
    ["a pipeline URL that is not http", "/pipelines", { url: { pipeline_url: "file:///etc/passwd" } }, /URL/],
    ["a pipeline URL nobody answers", "/pipelines", { url: { pipeline_url: "http://127.0.0.1:1/x.yaml" } }, /127\.0\.0\.1/],
  ])("refuses %s (400)", async (_what, path, body, message) => {
    expectApiStatus(await t.rest("POST", apis + path, body), 400, 3, message);
  });

  it.each([
    ["malformated_zip.zip", /format/],
    ["malformed_zip2.zip", /zip/],
    ["unknown_format.foo", /format/],
    ["invalid-workflow.yaml", /resource type/],
  ])("refuses the upload of %s with 400", async (file, message) => {
    const res = await upload(t.server.httpUrl, file, readFixture(uploadFile(file)));
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
  });

  it("refuses an upload over 32 MiB with 413", async () => {
    const res = await upload(t.server.httpUrl, "big.yaml", Buffer.alloc(32 * 1024 * 1024 + 1, 32));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe(8);
  });

  it.each([
    ["page_size=-1", /page_size/],
    ["sort_by=name%20sideways", /sort/],
    ["filter=%7Bnot-json", /filter/],
    ["page_token=garbage!!", /token/],
    [`filter=${encodeURIComponent(JSON.stringify({ predicates: [{ key: "colour", op: "EQUALS", string_value: "x" }] }))}`, /colour/],
    ["resource_reference_key.id=abc", /resource_reference_key/],
  ])("refuses a run list with %s (400)", async (query, message) => {
    expectApiStatus(await t.rest("GET", `${apis}/runs?${query}`), 400, 3, message);
  });

  it("reports invalid and duplicate metrics per metric", async () => {
    const res = await t.rest("POST", `${apis}/runs/${runId}:reportMetrics`, {
      metrics: [
        { name: "accuracy", node_id: "n1", number_value: 0.5, format: "PERCENTAGE" },
        { name: "accuracy", node_id: "n1", number_value: 0.7 },
        { name: "9lives", node_id: "n1", number_value: 1 },
        { name: "x".repeat(64), node_id: "n1" },
        { name: "ok", node_id: "" },
        { name: "ok", node_id: "n".repeat(129) },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { status: string }) => r.status)).toEqual([
      "OK",
      "DUPLICATE_REPORTING",
      "INVALID_ARGUMENT",
      "INVALID_ARGUMENT",
      "INVALID_ARGUMENT",
      "INVALID_ARGUMENT",
    ]);
    const run = (await t.rest("GET", `${apis}/runs/${runId}`)).body.run;
    expect(run.metrics).toEqual([{ name: "accuracy", node_id: "n1", number_value: 0.5, format: "PERCENTAGE" }]);
  });

  it("answers 404 for an artifact the run does not have", async () => {
    expectApiStatus(await t.rest("GET", `${apis}/runs/${runId}/nodes/n1/artifacts/main-logs:read`), 404, 5, /main-logs/);
  });
});
