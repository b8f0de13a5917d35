// The original server's integration scenarios (experiments, pipelines, runs, jobs), in our own
// words and data, over REST on both databases.
import { parse as parseYaml } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startTestServer, type TestServer } from "../helpers/server.js";
import { fileServer, readFixture, upload, uploadFile, workflowFile } from "./fixtures.js";

const apis = "/apis/v1beta1";
// Creation times have millisecond precision; a pause keeps creation order unambiguous.
const pause = () => new Promise((resolve) => setTimeout(resolve, 5));
async function until(condition: () => Promise<boolean>, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(databases)("pipelines REST scenarios on %s", (database) => {
  let t: TestServer;
  let files: Awaited<ReturnType<typeof fileServer>>;
  beforeAll(async () => {
    t = await startTestServer({ database });
    files = await fileServer({
      "sequential.yaml": readFixture(workflowFile("hello-world.yaml")),
      "arguments.pipeline.zip": readFixture(uploadFile("arguments.pipeline.zip")),
    });
  });
  afterAll(async () => {
    await files.close();
    await t.close();
  });

  const names = (items: { name: string }[] | undefined) => (items ?? []).map((i) => i.name);

  async function walk(path: string, key: string, query: string) {
    const first = await t.rest("GET", `${path}?page_size=2&${query}`);
    expect(first.status).toBe(200);
    const pages = [first.body];
    let token = first.body.next_page_token;
    while (token) {
      const next = await t.rest("GET", `${path}?page_size=2&page_token=${encodeURIComponent(token)}&${query}`);
      pages.push(next.body);
      token = next.body.next_page_token;
    }
    return pages.map((p) => names(p[key]));
  }

  describe("initialization", () => {
    it("starts with exactly the Default experiment, which can be deleted", async () => {
      const list = await t.rest("GET", `${apis}/experiments`);
      expect(list.body.experiments).toHaveLength(1);
      expect(list.body.experiments[0]).toMatchObject({ name: "Default", description: expect.any(String) });
      expect(list.body.total_size).toBe(1);
      expect((await t.rest("DELETE", `${apis}/experiments/${list.body.experiments[0].id}`)).status).toBe(200);
      // Zero is omitted, as proto3 JSON and the original server have it.
      expect((await t.rest("GET", `${apis}/experiments`)).body).toEqual({ experiments: [] });
    });
  });

  describe("experiments", () => {
    let training: { id: string };
    it("creates an experiment and refuses its name twice", async () => {
      const created = await t.rest("POST", `${apis}/experiments`, { name: "training", description: "my first experiment" });
      expect(created.status).toBe(200);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: "training",
        description: "my first experiment",
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      training = created.body;
      const again = await t.rest("POST", `${apis}/experiments`, { name: "training" });
      expect(again.status).toBe(409);
      expect(again.body.message).toContain("Please specify a new name");
    });

    it("lists, sorts and pages experiments", async () => {
      await pause();
      await t.rest("POST", `${apis}/experiments`, { name: "prediction" });
      await pause();
      await t.rest("POST", `${apis}/experiments`, { name: "moonshot" });
      expect((await t.rest("GET", `${apis}/experiments`)).body.total_size).toBe(3);
      expect(await walk(`${apis}/experiments`, "experiments", "sort_by=name")).toEqual([["moonshot", "prediction"], ["training"]]);
      expect(await walk(`${apis}/experiments`, "experiments", "sort_by=created_at")).toEqual([["training", "prediction"], ["moonshot"]]);
      expect(await walk(`${apis}/experiments`, "experiments", "sort_by=name%20desc")).toEqual([["training", "prediction"], ["moonshot"]]);
      const bad = await t.rest("GET", `${apis}/experiments?sort_by=unknownfield`);
      expect(bad.status).toBe(400);
    });

    it("gets an experiment as it was created", async () => {
      expect((await t.rest("GET", `${apis}/experiments/${training.id}`)).body).toEqual(training);
      expect((await t.rest("GET", `${apis}/experiments/no-such-id`)).status).toBe(404);
    });
  });

  describe("pipelines", () => {
    let argumentsPipeline: { id: string };
    it("uploads a workflow named after its file, once", async () => {
      const bytes = readFixture(uploadFile("arguments-parameters.yaml"));
      const res = await upload(t.server.httpUrl, "arguments-parameters.yaml", bytes);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: expect.any(String),
        name: "arguments-parameters.yaml",
        parameters: [{ name: "param1", value: "hello" }, { name: "param2" }],
      });
      expect(res.body.description).toBeUndefined();
      argumentsPipeline = res.body;
      const again = await upload(t.server.httpUrl, "arguments-parameters.yaml", bytes);
      expect(again.status).toBe(409);
      expect(again.body.message).toContain("Please specify a new name");
    });

    it("creates pipelines from URLs and from a zip upload", async () => {
      await pause();
      const sequential = await t.rest("POST", `${apis}/pipelines`, { url: { pipeline_url: `${files.url}/sequential.yaml` }, name: "sequential" });
      expect(sequential.status).toBe(200);
      expect(sequential.body.name).toBe("sequential");
      await pause();
      const zip = await upload(t.server.httpUrl, "arguments.pipeline.zip", readFixture(uploadFile("arguments.pipeline.zip")), "?name=zip-arguments-parameters");
      expect(zip.status).toBe(200);
      expect(zip.body.name).toBe("zip-arguments-parameters");
      await pause();
      const fromUrl = await t.rest("POST", `${apis}/pipelines`, { url: { pipeline_url: `${files.url}/arguments.pipeline.zip` } });
      expect(fromUrl.body.name).toBe("arguments.pipeline.zip");
      const missing = await t.rest("POST", `${apis}/pipelines`, { url: { pipeline_url: `${files.url}/nothing.yaml` } });
      expect(missing.status).toBe(400);
      expect(missing.body.message).toMatch(/404/);
    });

    it("lists, sorts and pages pipelines", async () => {
      const list = await t.rest("GET", `${apis}/pipelines`);
      expect(list.body.total_size).toBe(4);
      const byName = [["arguments-parameters.yaml", "arguments.pipeline.zip"], ["sequential", "zip-arguments-parameters"]];
      expect(await walk(`${apis}/pipelines`, "pipelines", "sort_by=name")).toEqual(byName);
      expect(await walk(`${apis}/pipelines`, "pipelines", "sort_by=created_at")).toEqual([
        ["arguments-parameters.yaml", "sequential"],
        ["zip-arguments-parameters", "arguments.pipeline.zip"],
      ]);
      expect(await walk(`${apis}/pipelines`, "pipelines", "sort_by=name%20desc")).toEqual([
        ["zip-arguments-parameters", "sequential"],
        ["arguments.pipeline.zip", "arguments-parameters.yaml"],
      ]);
      expect((await t.rest("GET", `${apis}/pipelines?sort_by=unknownfield`)).status).toBe(400);
    });

    it("gets a pipeline and its template exactly as uploaded", async () => {
      expect((await t.rest("GET", `${apis}/pipelines/${argumentsPipeline.id}`)).body).toEqual(argumentsPipeline);
      const template = await t.rest("GET", `${apis}/pipelines/${argumentsPipeline.id}/templates`);
      expect(template.body.template).toBe(readFixture(uploadFile("arguments-parameters.yaml")).toString("utf8"));
      expect(parseYaml(template.body.template).kind).toBe("Workflow");
    });

    it("deletes pipelines", async () => {
      const all = (await t.rest("GET", `${apis}/pipelines`)).body.pipelines as { id: string }[];
      for (const p of all) expect((await t.rest("DELETE", `${apis}/pipelines/${p.id}`)).status).toBe(200);
      expect((await t.rest("GET", `${apis}/pipelines/${all[0].id}`)).status).toBe(404);
    });
  });

  describe("runs", () => {
    let helloPipeline: { id: string };
    let helloExperiment: { id: string };
    let argumentsExperiment: { id: string };
    let helloRun: { id: string };
    const argumentsJson = JSON.stringify(parseYaml(readFixture(workflowFile("arguments-parameters.yaml")).toString()));

    beforeAll(async () => {
      helloPipeline = (await upload(t.server.httpUrl, "hello-world.yaml", readFixture(workflowFile("hello-world.yaml")))).body;
      helloExperiment = (await t.rest("POST", `${apis}/experiments`, { name: "hello world experiment" })).body;
      argumentsExperiment = (await t.rest("POST", `${apis}/experiments`, { name: "argument parameter experiment" })).body;
    });

    it("creates a run of a stored pipeline in an experiment", async () => {
      const reference = { key: { type: "EXPERIMENT", id: helloExperiment.id }, relationship: "OWNER" };
      const created = await t.rest("POST", `${apis}/runs`, {
        name: "hello world",
        description: "this is hello world",
        pipeline_spec: { pipeline_id: helloPipeline.id },
        resource_references: [reference],
      });
      expect(created.status).toBe(200);
      const { run, pipeline_runtime } = created.body;
      expect(run).toMatchObject({ name: "hello world", description: "this is hello world", resource_references: [reference], status: "Pending" });
      expect(run.pipeline_spec.pipeline_id).toBe(helloPipeline.id);
      expect(run.pipeline_spec.workflow_manifest).toContain("whalesay");
      expect(run.storage_state).toBeUndefined();
      expect(run.created_at).toBe(run.scheduled_at);
      expect(run.finished_at).toBeUndefined();
      const runtime = JSON.parse(pipeline_runtime.workflow_manifest);
      expect(runtime.metadata.name).toMatch(/^hello-world-[a-z]{5}$/);
      expect(runtime.metadata.uid).toBe(run.id);
      expect(pipeline_runtime.workflow_manifest).toContain("whalesay");
      // The run executes meanwhile (whalesay's cowsay is not installed here, so it fails): status
      // and runtime move on, the rest stays as created.
      const got = (await t.rest("GET", `${apis}/runs/${run.id}`)).body;
      for (const key of ["id", "name", "description", "pipeline_spec", "resource_references", "created_at", "scheduled_at"]) {
        expect(got.run[key]).toEqual(run[key]);
      }
      expect(JSON.parse(got.pipeline_runtime.workflow_manifest).metadata.name).toBe(runtime.metadata.name);
      helloRun = run;
    });

    it("creates a run from a workflow manifest with parameters, echoing the manifest exactly", async () => {
      await pause();
      const created = await t.rest("POST", `${apis}/runs`, {
        name: "argument parameter",
        pipeline_spec: { workflow_manifest: argumentsJson, parameters: [{ name: "param1", value: "goodbye" }, { name: "param2", value: "world" }] },
        resource_references: [{ key: { type: "EXPERIMENT", id: argumentsExperiment.id }, relationship: "OWNER" }],
      });
      expect(created.status).toBe(200);
      expect(created.body.run.pipeline_spec.workflow_manifest).toBe(argumentsJson);
      const runtime = JSON.parse(created.body.pipeline_runtime.workflow_manifest);
      expect(runtime.metadata.name).toMatch(/^arguments-parameters-/);
      expect(runtime.spec.arguments.parameters).toEqual([{ name: "param1", value: "goodbye" }, { name: "param2", value: "world" }]);
    });

    it("lists, pages, sorts and filters runs by experiment", async () => {
      expect((await t.rest("GET", `${apis}/runs`)).body.total_size).toBe(2);
      const page1 = await t.rest("GET", `${apis}/runs?page_size=1`);
      expect(names(page1.body.runs)).toEqual(["hello world"]);
      const page2 = await t.rest("GET", `${apis}/runs?page_size=1&page_token=${encodeURIComponent(page1.body.next_page_token)}`);
      expect(names(page2.body.runs)).toEqual(["argument parameter"]);
      expect(names((await t.rest("GET", `${apis}/runs?sort_by=name`)).body.runs)).toEqual(["argument parameter", "hello world"]);
      expect((await t.rest("GET", `${apis}/runs?sort_by=unknownfield`)).status).toBe(400);
      const inHello = await t.rest("GET", `${apis}/runs?resource_reference_key.type=EXPERIMENT&resource_reference_key.id=${helloExperiment.id}`);
      expect(names(inHello.body.runs)).toEqual(["hello world"]);
      expect(inHello.body.total_size).toBe(1);
      expect(inHello.body.runs[0].pipeline_runtime).toBeUndefined();
    });

    it("archives a run, which stays listed in its experiment", async () => {
      expect((await t.rest("POST", `${apis}/runs/${helloRun.id}:archive`)).body).toEqual({});
      const inHello = await t.rest("GET", `${apis}/runs?resource_reference_key.type=EXPERIMENT&resource_reference_key.id=${helloExperiment.id}`);
      expect(inHello.body.runs[0].storage_state).toBe("STORAGESTATE_ARCHIVED");
      expect((await t.rest("POST", `${apis}/runs/${helloRun.id}:unarchive`)).status).toBe(200);
      expect((await t.rest("GET", `${apis}/runs/${helloRun.id}`)).body.run.storage_state).toBeUndefined();
      expect((await t.rest("POST", `${apis}/runs/no-such-run:archive`)).status).toBe(404);
    });

    it("terminates a long-running run", async () => {
      const longRunning = (await upload(t.server.httpUrl, "long-running.yaml", readFixture(workflowFile("long-running.yaml")))).body;
      const run = (
        await t.rest("POST", `${apis}/runs`, {
          name: "long running",
          pipeline_spec: { pipeline_id: longRunning.id },
          resource_references: [{ key: { type: "EXPERIMENT", id: helloExperiment.id }, relationship: "OWNER" }],
        })
      ).body.run;
      await until(async () => (await t.rest("GET", `${apis}/runs/${run.id}`)).body.run.status === "Running");
      const started = Date.now();
      expect((await t.rest("POST", `${apis}/runs/${run.id}/terminate`)).body).toEqual({});
      // Terminate returns once the local engine has killed the steps; KFP showed Terminating first.
      expect(Date.now() - started).toBeLessThan(3000);
      const got = (await t.rest("GET", `${apis}/runs/${run.id}`)).body;
      expect(got.run.status).toBe("Failed");
      expect(got.run.finished_at).toBeDefined();
      const nodes = Object.values(JSON.parse(got.pipeline_runtime.workflow_manifest).status.nodes) as { type: string; message?: string }[];
      expect(nodes.find((n) => n.type === "Pod")?.message).toBe("terminated");
      expect(got.run.pipeline_spec.workflow_manifest).toContain("wait-awhile");
      expect(got.pipeline_runtime.workflow_manifest).toContain("wait-awhile");
      expect(got.run).toHaveProperty("created_at");
      expect(got.run).toHaveProperty("scheduled_at");
    });
  });

  describe("jobs", () => {
    let pipeline: { id: string };
    let helloExperiment: { id: string };
    let argumentsExperiment: { id: string };

    beforeAll(async () => {
      pipeline = (await upload(t.server.httpUrl, "hello-world-job.yaml", readFixture(workflowFile("hello-world.yaml")))).body;
      helloExperiment = (await t.rest("POST", `${apis}/experiments`, { name: "job hello world experiment" })).body;
      argumentsExperiment = (await t.rest("POST", `${apis}/experiments`, { name: "job argument parameter experiment" })).body;
    });

    it("creates and gets a one-off job", async () => {
      const reference = { key: { type: "EXPERIMENT", id: helloExperiment.id }, relationship: "OWNER" };
      const created = await t.rest("POST", `${apis}/jobs`, {
        name: "hello world",
        description: "this is hello world",
        pipeline_spec: { pipeline_id: pipeline.id },
        resource_references: [reference],
        max_concurrency: "10",
        enabled: true,
      });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        name: "hello world",
        description: "this is hello world",
        resource_references: [reference],
        max_concurrency: "10",
        enabled: true,
        mode: "ENABLED",
        status: "Enabled",
        trigger: {},
      });
      expect(created.body.pipeline_spec.workflow_manifest).toContain("whalesay");
      // A one-off job fires once, at creation: its status moves to Succeeded.
      const { status: _status, updated_at: _updated, ...stable } = created.body;
      await until(async () => (await t.rest("GET", `${apis}/jobs/${created.body.id}`)).body.status === "Succeeded");
      expect((await t.rest("GET", `${apis}/jobs/${created.body.id}`)).body).toMatchObject(stable);
      const runs = (await t.rest("GET", `${apis}/runs?resource_reference_key.type=EXPERIMENT&resource_reference_key.id=${helloExperiment.id}`)).body.runs;
      expect(runs).toHaveLength(1);
      expect(runs[0].name).toMatch(/^hello world-1-\d+$/);
      expect(runs[0].resource_references).toEqual([reference, { key: { type: "JOB", id: created.body.id }, relationship: "CREATOR" }]);
    });

    it("creates a job from a manifest with parameters, lists, sorts and filters jobs", async () => {
      const manifest = JSON.stringify(parseYaml(readFixture(workflowFile("arguments-parameters.yaml")).toString()));
      await pause();
      const created = await t.rest("POST", `${apis}/jobs`, {
        name: "argument parameter",
        pipeline_spec: { workflow_manifest: manifest, parameters: [{ name: "param1", value: "goodbye" }, { name: "param2", value: "world" }] },
        resource_references: [{ key: { type: "EXPERIMENT", id: argumentsExperiment.id }, relationship: "OWNER" }],
        max_concurrency: "1",
        trigger: { periodic_schedule: { interval_second: "3600" } },
        enabled: true,
      });
      expect(created.status).toBe(200);
      expect(created.body.pipeline_spec.workflow_manifest).toContain("arguments-parameters-");
      expect(created.body.trigger).toEqual({ periodic_schedule: { interval_second: "3600" } });
      expect((await t.rest("GET", `${apis}/jobs`)).body.total_size).toBe(2);
      const page1 = await t.rest("GET", `${apis}/jobs?page_size=1`);
      expect(names(page1.body.jobs)).toEqual(["hello world"]);
      const page2 = await t.rest("GET", `${apis}/jobs?page_size=1&page_token=${encodeURIComponent(page1.body.next_page_token)}`);
      expect(names(page2.body.jobs)).toEqual(["argument parameter"]);
      expect(names((await t.rest("GET", `${apis}/jobs?sort_by=name`)).body.jobs)).toEqual(["argument parameter", "hello world"]);
      expect((await t.rest("GET", `${apis}/jobs?sort_by=unknown`)).status).toBe(400);
      const inExperiment = await t.rest("GET", `${apis}/jobs?resource_reference_key.type=EXPERIMENT&resource_reference_key.id=${helloExperiment.id}`);
      expect(names(inExperiment.body.jobs)).toEqual(["hello world"]);
    });

    it("disables and enables a job, and disables the jobs of a deleted experiment", async () => {
      const job = (await t.rest("GET", `${apis}/jobs?sort_by=name`)).body.jobs[0];
      expect((await t.rest("POST", `${apis}/jobs/${job.id}/disable`)).body).toEqual({});
      expect((await t.rest("GET", `${apis}/jobs/${job.id}`)).body).toMatchObject({ enabled: false, mode: "DISABLED", status: "Disabled" });
      expect((await t.rest("POST", `${apis}/jobs/${job.id}/enable`)).status).toBe(200);
      expect((await t.rest("GET", `${apis}/jobs/${job.id}`)).body).toMatchObject({ enabled: true, status: "Enabled" });
      expect((await t.rest("DELETE", `${apis}/experiments/${argumentsExperiment.id}`)).status).toBe(200);
      expect((await t.rest("GET", `${apis}/jobs/${job.id}`)).body).toMatchObject({ enabled: false, status: "Disabled" });
      expect((await t.rest("DELETE", `${apis}/jobs/${job.id}`)).status).toBe(200);
      expect((await t.rest("GET", `${apis}/jobs/${job.id}`)).status).toBe(404);
    });
  });
});
