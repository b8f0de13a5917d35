// The metadata API over REST (raw HTTP/1.1), replaying the call sequences real clients made.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, startTestServer, type RestResponse, type TestServer } from "../helpers/server.js";

const api = "/api/v1alpha1";
const enc = encodeURIComponent;

function expectApiStatus(res: RestResponse, status: number, code: number, messagePart?: RegExp) {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/application\/json/);
  expect(res.body).toMatchObject({ code, error: expect.any(String), message: expect.any(String) });
  expect(res.body.error).toBe(res.body.message);
  expect(res.body.details).toEqual([
    expect.objectContaining({ "@type": "type.googleapis.com/api.Error", error_message: expect.any(String) }),
  ]);
  if (messagePart) expect(res.body.message).toMatch(messagePart);
  expect(res.text).not.toMatch(/at .*\.(ts|js):\d+|SELECT|INSERT|prisma/i);
}

describe.each(databases)("metadata REST API on %s", (database) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ database });
  });
  afterAll(async () => {
    await t.close();
  });

  describe("predefined types", () => {
    it("lists the kubeflow.org/alpha artifact types in ascending id order", async () => {
      const res = await t.rest("GET", `${api}/artifact_types`);
      expect(res.status).toBe(200);
      const names = res.body.artifact_types.map((x: { name: string }) => x.name);
      expect(names).toEqual(["kubeflow.org/alpha/model", "kubeflow.org/alpha/data_set", "kubeflow.org/alpha/metrics"]);
      const ids = res.body.artifact_types.map((x: { id: string }) => BigInt(x.id));
      expect([...ids].sort((a, b) => (a < b ? -1 : 1))).toEqual(ids);
      expect(res.body.artifact_types[0].properties).toEqual({
        name: "STRING",
        description: "STRING",
        owner: "STRING",
        create_time: "STRING",
        version: "STRING",
        model_type: "STRING",
        __ALL_META__: "STRING",
      });
    });

    it("fetches a type by raw-slash and by %2F-encoded name", async () => {
      const raw = await t.rest("GET", `${api}/artifact_types/kubeflow.org/alpha/model`);
      const encoded = await t.rest("GET", `${api}/artifact_types/${enc("kubeflow.org/alpha/model")}`);
      expect(raw.status).toBe(200);
      expect(raw.body.artifact_type.name).toBe("kubeflow.org/alpha/model");
      expect(typeof raw.body.artifact_type.id).toBe("string");
      expect(encoded.body).toEqual(raw.body);
      const exec = await t.rest("GET", `${api}/execution_types/kubeflow.org/alpha/execution`);
      expect(exec.body.execution_type.properties).toMatchObject({ executable_id: "STRING", __ALL_META__: "STRING" });
    });
  });

  describe("the Python SDK's logging sequence", () => {
    const workspace = { __kf_workspace__: { string_value: "ws_1" }, __kf_run__: { string_value: "first run" } };
    const now = "2019-06-12T01:21:48.259263Z";
    let executionId: string;
    const artifactIds: Record<string, string> = {};

    async function logArtifact(type: string, uri: string, properties: Record<string, unknown>, eventType: string) {
      const res = await t.rest("POST", `${api}/artifact_types/${enc(`kubeflow.org/alpha/${type}`)}/artifacts`, {
        uri,
        properties,
        custom_properties: workspace,
      });
      expect(res.status).toBe(200);
      expect(res.body.artifact).toMatchObject({ uri, properties, custom_properties: workspace });
      const event = await t.rest("POST", `${api}/events`, {
        artifact_id: res.body.artifact.id,
        execution_id: executionId,
        type: eventType,
      });
      expect(event.status).toBe(200);
      expect(event.body).toEqual({});
      return res.body.artifact.id as string;
    }

    it("creates the execution", async () => {
      const properties = {
        name: { string_value: "test execution" },
        create_time: { string_value: now },
        description: { string_value: "a sample execution" },
      };
      const res = await t.rest("POST", `${api}/execution_types/${enc("kubeflow.org/alpha/execution")}/executions`, {
        properties,
        custom_properties: workspace,
      });
      expect(res.status).toBe(200);
      expect(res.body.execution).toEqual({
        id: expect.stringMatching(/^\d+$/),
        type_id: expect.stringMatching(/^\d+$/),
        properties,
        custom_properties: workspace,
      });
      executionId = res.body.execution.id;
    });

    it("logs a data set input, a metrics output and a model output", async () => {
      const meta = (extra: object) => ({ string_value: JSON.stringify({ ...extra, id: null }) });
      artifactIds.data = await logArtifact(
        "data_set",
        "file://path/to/dataset",
        {
          name: { string_value: "mytable-dump" },
          create_time: { string_value: now },
          version: { string_value: "v1.0.0" },
          query: { string_value: "SELECT * FROM mytable" },
          __ALL_META__: meta({ name: "mytable-dump" }),
        },
        "INPUT",
      );
      artifactIds.metrics = await logArtifact(
        "metrics",
        "gcs://my-bucket/mnist-eval.csv",
        {
          name: { string_value: "MNIST-evaluation" },
          create_time: { string_value: now },
          data_set_id: { string_value: "123" },
          model_id: { string_value: "12345" },
          metrics_type: { string_value: "validation" },
          __ALL_META__: meta({ values: { accuracy: 0.95 } }),
        },
        "OUTPUT",
      );
      artifactIds.model = await logArtifact(
        "model",
        "gcs://my-bucket/mnist",
        {
          name: { string_value: "MNIST" },
          create_time: { string_value: now },
          model_type: { string_value: "neural network" },
          version: { string_value: "v0.0.1" },
          __ALL_META__: meta({ hyperparameters: { layers: [10, 3, 1] } }),
        },
        "OUTPUT",
      );
    });

    it("lists the workspace's models by type", async () => {
      const res = await t.rest("GET", `${api}/artifact_types/${enc("kubeflow.org/alpha/model")}/artifacts`);
      expect(res.status).toBe(200);
      const mine = res.body.artifacts.filter(
        (a: { custom_properties?: typeof workspace }) => a.custom_properties?.__kf_workspace__.string_value === "ws_1",
      );
      expect(mine.map((a: { id: string }) => a.id)).toEqual([artifactIds.model]);
    });

    it("walks lineage from the model to the execution and back", async () => {
      const byModel = await t.rest("GET", `${api}/events/artifacts/${artifactIds.model}`);
      expect(byModel.status).toBe(200);
      expect(byModel.body.events).toHaveLength(1);
      expect(byModel.body.events[0]).toMatchObject({ artifact_id: artifactIds.model, execution_id: executionId, type: "OUTPUT" });
      expect(byModel.body.events[0].milliseconds_since_epoch).toMatch(/^\d+$/);
      expect(Object.keys(byModel.body.artifacts)).toEqual([artifactIds.model]);
      expect(Object.keys(byModel.body.executions)).toEqual([executionId]);

      const byExecution = await t.rest("GET", `${api}/events/executions/${executionId}`);
      expect(byExecution.body.events.map((e: { type: string }) => e.type)).toEqual(["INPUT", "OUTPUT", "OUTPUT"]);
      expect(Object.keys(byExecution.body.artifacts).sort()).toEqual(Object.values(artifactIds).sort());
      expect(byExecution.body.artifacts[artifactIds.data].uri).toBe("file://path/to/dataset");
      expect(Object.keys(byExecution.body.executions)).toEqual([executionId]);
    });
  });

  describe("the e2e script's sequence with type evolution", () => {
    it("adds a property to the model type with PATCH and keeps it", async () => {
      const before = await t.rest("GET", `${api}/artifact_types/kubeflow.org/alpha/model`);
      const properties = { ...before.body.artifact_type.properties, export_dir: "STRING" };
      const patched = await t.rest("PATCH", `${api}/artifact_types`, { name: "kubeflow.org/alpha/model", properties });
      expect(patched.status).toBe(200);
      expect(patched.body.artifact_type).toEqual({ ...before.body.artifact_type, properties });
      const after = await t.rest("GET", `${api}/artifact_types/kubeflow.org/alpha/model`);
      expect(after.body.artifact_type.properties.export_dir).toBe("STRING");
    });

    it("creates an artifact through raw slashes, ignoring unknown fields, and finds it everywhere", async () => {
      const created = await t.rest("POST", `${api}/artifact_types/kubeflow.org/alpha/model/artifacts`, {
        uri: "gs://my-bucket/mnist",
        properties: { name: { string_value: "MNIST" }, export_dir: { string_value: "/models/1" } },
        custom_properties: { __kf_run__: { string_value: "run-1" }, __kf_workspace__: { string_value: "ws-e2e" } },
        labels: { team: "x" },
      });
      expect(created.status).toBe(200);
      const id = created.body.artifact.id;
      const all = await t.rest("GET", `${api}/artifacts`);
      expect(all.body.artifacts.map((a: { id: string }) => a.id)).toContain(id);
      const byQuery = await t.rest("GET", `${api}/artifacts?name=${enc("artifact_types/kubeflow.org/alpha/model")}`);
      expect(byQuery.body.artifacts.map((a: { id: string }) => a.id)).toContain(id);
      const one = await t.rest("GET", `${api}/artifact_types/kubeflow.org/alpha/model/artifacts/${id}`);
      expect(one.status).toBe(200);
      expect(one.body.artifact).toEqual(created.body.artifact);
    });

    it("adds input and output properties to the execution type", async () => {
      const before = await t.rest("GET", `${api}/execution_types/kubeflow.org/alpha/execution`);
      const properties = { ...before.body.execution_type.properties, input: "STRING", output: "STRING" };
      const patched = await t.rest("PATCH", `${api}/execution_types`, { name: "kubeflow.org/alpha/execution", properties });
      expect(patched.status).toBe(200);
      const list = await t.rest("GET", `${api}/execution_types`);
      expect(list.body.execution_types[0].properties).toEqual(properties);
    });
  });

  describe("types", () => {
    const type = { name: "test.org/types/tabular", properties: { rows: "INT", score: "DOUBLE", source: "STRING" } };

    it("creates a type once and returns the same one for an identical request", async () => {
      const first = await t.rest("POST", `${api}/artifact_types`, type);
      const second = await t.rest("POST", `${api}/artifact_types`, type);
      expect(first.status).toBe(200);
      expect(first.body.artifact_type).toEqual({ id: expect.stringMatching(/^\d+$/), ...type });
      expect(second.body).toEqual(first.body);
    });

    it("refuses a different definition under an existing name with 409 pointing to PATCH", async () => {
      const res = await t.rest("POST", `${api}/artifact_types`, { ...type, properties: { rows: "STRING" } });
      expectApiStatus(res, 409, 6, /PATCH/);
    });

    it.each([
      ["an UNKNOWN property", { name: "test.org/bad", properties: { x: "UNKNOWN" } }],
      ["an empty name", { properties: { x: "INT" } }],
    ])("rejects %s with 400", async (_what, body) => {
      expectApiStatus(await t.rest("POST", `${api}/artifact_types`, body), 400, 3);
    });

    it("rejects removing or retyping a property through PATCH", async () => {
      const removed = await t.rest("PATCH", `${api}/artifact_types`, { name: type.name, properties: { rows: "INT" } });
      expectApiStatus(removed, 400, 3, /score.*cannot be removed/);
      const retyped = await t.rest("PATCH", `${api}/artifact_types`, { ...type, properties: { ...type.properties, rows: "DOUBLE" } });
      expectApiStatus(retyped, 400, 3, /rows/);
    });

    it("keeps execution struct types and compares them on re-creation", async () => {
      const execType = {
        name: "test.org/types/trainer",
        properties: { epochs: "INT" },
        input_type: { dict: { properties: { data: { any: {} } }, none_type_not_required: true } },
        output_type: { union_type: { candidates: [{ none: {} }, { list: { element: { any: {} } } }] } },
      };
      const created = await t.rest("POST", `${api}/execution_types`, execType);
      expect(created.status).toBe(200);
      expect(created.body.execution_type).toEqual({ id: expect.any(String), ...execType });
      const again = await t.rest("POST", `${api}/execution_types`, execType);
      expect(again.body).toEqual(created.body);
      const other = await t.rest("POST", `${api}/execution_types`, { ...execType, output_type: { any: {} } });
      expectApiStatus(other, 409, 6);
    });

    it("answers 404 for an unknown type", async () => {
      expectApiStatus(await t.rest("GET", `${api}/artifact_types/no.such/type`), 404, 5, /no\.such\/type/);
      expectApiStatus(await t.rest("DELETE", `${api}/execution_types/no.such/type`), 404, 5);
    });

    it("lists no artifacts, as an empty list, for a type without any", async () => {
      const res = await t.rest("GET", `${api}/artifact_types/${enc(type.name)}/artifacts`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ artifacts: [] });
    });
  });

  describe("artifacts and executions", () => {
    const typeName = "test.org/nodes/values";
    const path = `${api}/artifact_types/${enc(typeName)}/artifacts`;
    beforeAll(async () => {
      await t.rest("POST", `${api}/artifact_types`, { name: typeName, properties: { n: "INT", x: "DOUBLE", s: "STRING" } });
    });

    it("stores int64 and double values exactly", async () => {
      const properties = {
        n: { int_value: "9223372036854775807" },
        x: { double_value: 0.1234567890123 },
        s: { string_value: "héllo" },
      };
      const custom_properties = { tiny: { double_value: 1e-7 }, neg: { int_value: "-42" } };
      const created = await t.rest("POST", path, { properties, custom_properties });
      expect(created.body.artifact).toEqual({ id: expect.any(String), type_id: expect.any(String), uri: "", properties, custom_properties });
      const read = await t.rest("GET", `${path}/${created.body.artifact.id}`);
      expect(read.body.artifact).toEqual(created.body.artifact);
    });

    it.each([
      ["an undeclared property", { properties: { other: { string_value: "x" } } }, /other/],
      ["a value of the wrong kind", { properties: { n: { string_value: "1" } } }, /"n".*INT/],
      ["an empty value", { properties: { x: {} } }, /"x"/],
      ["a custom property without a value", { custom_properties: { c: {} } }, /"c"/],
      ["an id", { id: "5" }, /id/],
    ])("rejects %s with 400", async (_what, body, message) => {
      expectApiStatus(await t.rest("POST", path, body), 400, 3, message);
    });

    it("answers 404 for a missing artifact, another type's artifact, or a missing parent type", async () => {
      const created = await t.rest("POST", path, {});
      const id = created.body.artifact.id;
      expectApiStatus(await t.rest("GET", `${path}/999999`), 404, 5);
      expectApiStatus(await t.rest("GET", `${api}/artifact_types/kubeflow.org/alpha/model/artifacts/${id}`), 404, 5);
      expectApiStatus(await t.rest("POST", `${api}/artifact_types/no.such/type/artifacts`, {}), 404, 5);
    });

    it("stores and returns an execution's last_known_state", async () => {
      const res = await t.rest("POST", `${api}/execution_types/kubeflow.org/alpha/execution/executions`, {
        last_known_state: "RUNNING",
        properties: { name: { string_value: "x" } },
      });
      expect(res.body.execution.last_known_state).toBe("RUNNING");
      const read = await t.rest("GET", `${api}/execution_types/kubeflow.org/alpha/execution/executions/${res.body.execution.id}`);
      expect(read.body.execution.last_known_state).toBe("RUNNING");
      const all = await t.rest("GET", `${api}/executions`);
      expect(all.body.executions.map((e: { id: string }) => e.id)).toContain(res.body.execution.id);
    });
  });

  describe("events and deletes", () => {
    let artifact: string;
    let execution: string;
    beforeAll(async () => {
      await t.rest("POST", `${api}/artifact_types`, { name: "test.org/del/a", properties: {} });
      await t.rest("POST", `${api}/execution_types`, { name: "test.org/del/e", properties: {} });
      artifact = (await t.rest("POST", `${api}/artifact_types/test.org/del/a/artifacts`, { uri: "u" })).body.artifact.id;
      execution = (await t.rest("POST", `${api}/execution_types/test.org/del/e/executions`, {})).body.execution.id;
    });

    it("records an event with a path and a given time", async () => {
      const res = await t.rest("POST", `${api}/events`, {
        artifact_id: artifact,
        execution_id: execution,
        type: "DECLARED_INPUT",
        path: { steps: [{ key: "inputs" }, { index: "0" }] },
        milliseconds_since_epoch: "1560302508259",
      });
      expect(res.status).toBe(200);
      const events = await t.rest("GET", `${api}/events/executions/${execution}`);
      expect(events.body.events).toEqual([
        {
          artifact_id: artifact,
          execution_id: execution,
          type: "DECLARED_INPUT",
          path: { steps: [{ key: "inputs" }, { index: "0" }] },
          milliseconds_since_epoch: "1560302508259",
        },
      ]);
    });

    it.each([
      ["no artifact_id", () => ({ execution_id: execution, type: "INPUT" }), 400, 3],
      ["no execution_id", () => ({ artifact_id: artifact, type: "INPUT" }), 400, 3],
      ["no type", () => ({ artifact_id: artifact, execution_id: execution }), 400, 3],
      ["an unknown artifact", () => ({ artifact_id: "987654", execution_id: execution, type: "INPUT" }), 404, 5],
      ["an unknown execution", () => ({ artifact_id: artifact, execution_id: "987654", type: "INPUT" }), 404, 5],
    ])("rejects an event with %s", async (_what, body, status, code) => {
      expectApiStatus(await t.rest("POST", `${api}/events`, body()), status, code);
    });

    it("answers an empty view for an id without events and 400 for a malformed one", async () => {
      const res = await t.rest("GET", `${api}/events/artifacts/424242`);
      expect(res.body).toEqual({ events: [], artifacts: {}, executions: {} });
      expectApiStatus(await t.rest("GET", `${api}/events/artifacts/abc`), 400, 3);
    });

    it("refuses to delete a type that still has instances", async () => {
      expectApiStatus(await t.rest("DELETE", `${api}/artifact_types/test.org/del/a`), 400, 9, /still has/);
    });

    it("deletes an artifact with its events, then its type", async () => {
      const del = await t.rest("DELETE", `${api}/artifact_types/test.org/del/a/artifacts/${artifact}`);
      expect(del.status).toBe(200);
      expect(del.body).toEqual({});
      expectApiStatus(await t.rest("GET", `${api}/artifact_types/test.org/del/a/artifacts/${artifact}`), 404, 5);
      const events = await t.rest("GET", `${api}/events/executions/${execution}`);
      expect(events.body.events).toEqual([]);
      expect((await t.rest("DELETE", `${api}/artifact_types/test.org/del/a`)).status).toBe(200);
      expectApiStatus(await t.rest("GET", `${api}/artifact_types/test.org/del/a`), 404, 5);
    });

    it("deletes an execution and its type", async () => {
      expect((await t.rest("DELETE", `${api}/execution_types/test.org/del/e/executions/${execution}`)).status).toBe(200);
      expectApiStatus(await t.rest("DELETE", `${api}/execution_types/test.org/del/e/executions/${execution}`), 404, 5);
      expect((await t.rest("DELETE", `${api}/execution_types/test.org/del/e`)).status).toBe(200);
    });
  });

  describe("transport-level errors", () => {
    it("answers 400 for malformed JSON and for a body that is not an object", async () => {
      expectApiStatus(await t.rest("POST", `${api}/artifact_types`, "{not json"), 400, 3);
      expectApiStatus(await t.rest("POST", `${api}/artifact_types`, "[1,2]"), 400, 3);
      expectApiStatus(await t.rest("POST", `${api}/events`, '{"type":"NO_SUCH_TYPE"}'), 400, 3);
    });

    it("answers 404 for an unknown path and 405 for a known path with another method", async () => {
      expectApiStatus(await t.rest("GET", `${api}/no/such/thing`), 404, 5);
      const wrong = await t.rest("PUT", `${api}/events`, {});
      expect(wrong.status).toBe(405);
      expect(wrong.body).toMatchObject({ code: expect.any(Number), message: expect.any(String) });
    });

    it("answers 400 apiStatus for a malformed percent-encoding in the path", async () => {
      expectApiStatus(await t.rest("GET", `${api}/artifact_types/bad%zzname`), 400, 3);
    });

    it("serves the OpenAPI document of every binding", async () => {
      const res = await t.rest("GET", "/openapi.json");
      expect(res.status).toBe(200);
      expect(res.body.paths[`${api}/artifact_types/{name}`].get.operationId).toBe("GetArtifactType");
    });
  });
});
