import { create, toJson, type DescMethodUnary, type JsonValue, type Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { RunService, RunDetailSchema, ListRunsResponseSchema, Run_StorageState } from "../../gen/proto/kfp/run_pb.js";
import { ExperimentService } from "../../gen/proto/kfp/experiment_pb.js";
import {
  GetArtifactResponseSchema,
  ListEventsResponseSchema,
  MetadataService,
} from "../../gen/proto/metadata/service_pb.js";
import { notFound } from "../../src/errors.js";
import type { CallInfo } from "../../src/server/call-pipeline.js";
import { replyWithApiStatus, restGateway } from "../../src/transcoding/index.js";
import { EchoSchema, ThingsService } from "./things-service.js";

interface RecordedCall {
  method: DescMethodUnary;
  input: Message;
  info: CallInfo;
}

// The gateway only needs the pipeline's services and call(): a fake that records each call
// and answers with `respond` (by default the empty output, or the input echoed for Things).
let calls: RecordedCall[] = [];
let respond: (call: RecordedCall) => Message | Promise<Message>;
const defaultRespond = ({ method, input }: RecordedCall): Message =>
  method.output === EchoSchema ? create(EchoSchema, { thing: input } as never) : create(method.output);

const pipeline = {
  services: [MetadataService, RunService, ExperimentService, ThingsService],
  async call<O extends Message>(method: DescMethodUnary, input: Message, info: CallInfo): Promise<O> {
    const call = { method, input, info };
    calls.push(call);
    return (await respond(call)) as O;
  },
};

const BODY_LIMIT = 4096;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  // frameworkErrors: the router rejects malformed URLs before any route, the gateway's included.
  app = Fastify({ frameworkErrors: replyWithApiStatus });
  app.addHttpMethod("SEARCH", { hasBody: true }); // fastify must know a custom binding's method
  app.get("/healthz", async () => ({ status: "ok" }));
  app.post("/root-json", async (request) => ({ parsed: request.body }));
  await app.register(restGateway, { pipeline, bodyLimit: BODY_LIMIT });
  base = await app.listen({ port: 0, host: "127.0.0.1" });
});

afterAll(() => app.close());

beforeEach(() => {
  calls = [];
  respond = defaultRespond;
});

async function request(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, { method, body, headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as JsonValue) : undefined };
}

/** The input message of the only call, as proto3 JSON with lowerCamelCase names. */
function onlyInput(): JsonValue {
  expect(calls).toHaveLength(1);
  return toJson(calls[0].method.input, calls[0].input);
}

describe("routing", () => {
  it("serves a binding and answers JSON", async () => {
    const res = await request("GET", "/api/v1alpha1/artifact_types");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.json).toEqual({ artifact_types: [] });
    expect(calls[0].method.name).toBe("ListArtifactTypes");
  });

  it("passes headers, method, url and an abort signal to the pipeline", async () => {
    await request("GET", "/apis/v1beta1/runs?page_size=1", undefined, { authorization: "Bearer t0k" });
    const { info } = calls[0];
    expect(info.protocolName).toBe("rest");
    expect(info.requestMethod).toBe("GET");
    expect(info.url).toBe(`${base}/apis/v1beta1/runs?page_size=1`);
    expect(info.headers).toBeInstanceOf(Headers);
    expect(info.headers.get("authorization")).toBe("Bearer t0k");
    expect(info.signal?.aborted).toBe(false);
  });

  it("aborts the signal when the client goes away", async () => {
    let started!: () => void;
    const callStarted = new Promise<void>((resolve) => (started = resolve));
    let aborted!: Promise<void>;
    respond = ({ info }) => {
      aborted = new Promise((resolve) => info.signal?.addEventListener("abort", () => resolve()));
      started();
      return new Promise(() => {}); // never answers
    };
    const client = new AbortController();
    const pending = fetch(`${base}/apis/v1beta1/runs`, { signal: client.signal }).catch(() => undefined);
    await callStarted;
    client.abort();
    await pending;
    await aborted;
    expect(calls[0].info.signal?.aborted).toBe(true);
  });

  it("leaves other routes on the app and their JSON parsing alone", async () => {
    expect((await request("GET", "/healthz")).json).toEqual({ status: "ok" });
    const res = await request("POST", "/root-json", '{"a":1}', { "content-type": "application/json" });
    expect(res.json).toEqual({ parsed: { a: 1 } });
    expect(calls).toHaveLength(0);
  });

  it("decodes %2F in the path as a separator", async () => {
    const res = await request("GET", "/api/v1alpha1/artifact_types/kubeflow.org%2Falpha%2Fmodel/artifacts");
    expect(res.status).toBe(200);
    expect(calls[0].method.name).toBe("ListArtifacts");
    expect(onlyInput()).toEqual({ name: "artifact_types/kubeflow.org/alpha/model" });
  });

  it("routes verbs", async () => {
    const res = await request("POST", "/apis/v1beta1/runs/abc:archive");
    expect(res.status).toBe(200);
    expect(res.json).toEqual({});
    expect(calls[0].method.name).toBe("ArchiveRun");
    expect(onlyInput()).toEqual({ id: "abc" });
  });

  it("serves custom HTTP methods", async () => {
    const res = await request("SEARCH", "/v1/things/t1?kind=SMALL");
    expect(res.status).toBe(200);
    expect(calls[0].method.name).toBe("Find");
    expect(res.json).toEqual({ thing: { id: "t1", kind: "SMALL" }, others: [] });
  });

  it("converts path variables to nested and typed fields", async () => {
    const res = await request("GET", "/v1/things/t1/inner/n%20x/42:peek");
    expect(res.json).toEqual({ thing: { id: "t1", inner: { name: "n x", size: "42" } }, others: [] });
  });

  it("answers 400 for a path variable of the wrong type", async () => {
    const res = await request("GET", "/v1/things/t1/inner/n/big:peek");
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: Code.InvalidArgument, message: expect.stringMatching(/^invalid path parameter "inner.size": /) });
  });

  it("answers 404 with apiStatus for an unknown path", async () => {
    const res = await request("GET", "/nope?x=1");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.json).toEqual({
      error: "no route for GET /nope",
      message: "no route for GET /nope",
      code: Code.NotFound,
      details: [
        { "@type": "type.googleapis.com/api.Error", error_message: "no route for GET /nope", error_details: "no route for GET /nope" },
      ],
    });
  });

  it.each([
    ["PATCH", "/apis/v1beta1/runs/r1", "GET, DELETE"],
    ["DELETE", "/apis/v1beta1/runs", "POST, GET"],
    ["OPTIONS", "/apis/v1beta1/runs", "POST, GET"],
  ])("answers 405 with Allow for %s %s", async (method, path, allow) => {
    const res = await request(method, path);
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe(allow);
    expect(res.json).toMatchObject({ code: Code.Unimplemented, message: `method ${method} not allowed for ${path}` });
    expect(calls).toHaveLength(0);
  });

  it("answers 400 with apiStatus for malformed percent-encoding", async () => {
    const res = await request("GET", "/api/v1alpha1/artifact_types/%zz");
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: Code.InvalidArgument, details: [{ "@type": "type.googleapis.com/api.Error" }] });
  });
});

describe("query parameters", () => {
  it("fills nested fields, enums by name, camelCase names; ignores unknown keys; first value wins", async () => {
    await request(
      "GET",
      "/apis/v1beta1/runs?page_size=10&resource_reference_key.type=EXPERIMENT&resourceReferenceKey.id=e1" +
        "&sortBy=name%20desc&unknown=1&resource_reference_key.nope=2&page_token=a&page_token=b&filter=%7B%7D",
    );
    expect(calls[0].method.name).toBe("ListRuns");
    expect(onlyInput()).toEqual({
      pageSize: 10,
      resourceReferenceKey: { type: "EXPERIMENT", id: "e1" },
      sortBy: "name desc",
      pageToken: "a",
      filter: "{}",
    });
  });

  it("takes enums by number", async () => {
    await request("GET", "/apis/v1beta1/runs?resource_reference_key.type=2");
    expect(onlyInput()).toEqual({ resourceReferenceKey: { type: "JOB" } });
  });

  it("fills repeated fields from repeated keys and converts scalar types", async () => {
    const res = await request(
      "GET",
      "/v1/things/t1?tags=a&tags=b+c&nums=1&nums=-9007199254740993&kinds=SMALL&kinds=2&count=9007199254740993" +
        "&flag=true&kind=LARGE&blob=aGk%3D&ratio=0.5&small_count=7&inner.name=n&inner.size=3",
    );
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      thing: {
        id: "t1",
        count: "9007199254740993",
        flag: true,
        kind: "LARGE",
        tags: ["a", "b c"],
        nums: ["1", "-9007199254740993"],
        kinds: ["SMALL", "LARGE"],
        inner: { name: "n", size: "3" },
        blob: "aGk=",
        ratio: 0.5,
        small_count: 7,
      },
      others: [],
    });
  });

  it.each([
    ["1", true],
    ["True", true],
    ["t", true],
    ["0", false],
    ["FALSE", false],
  ])("reads bool %s", async (value, expected) => {
    await request("GET", `/v1/things/t1?flag=${value}`);
    expect(onlyInput()).toEqual(expected ? { id: "t1", flag: true } : { id: "t1" });
  });

  it("cannot override path variables", async () => {
    await request("GET", "/apis/v1beta1/runs/r1?run_id=other&runId=other");
    expect(onlyInput()).toEqual({ runId: "r1" });
  });

  it.each([
    ["/apis/v1beta1/runs?page_size=abc", /^invalid query parameter "page_size": .*"abc"/],
    ["/apis/v1beta1/runs?page_size=1.5", /^invalid query parameter "page_size"/],
    ["/apis/v1beta1/runs?resource_reference_key.type=BOGUS", /^invalid query parameter "resource_reference_key.type": .*"BOGUS"/],
    ["/apis/v1beta1/runs?resource_reference_key=x", /^query parameter "resource_reference_key" names a field that cannot be set from a string$/],
    ["/v1/things/t1?flag=yes", /^invalid query parameter "flag"/],
    ["/v1/things/t1?count=12x", /^invalid query parameter "count"/],
    ["/v1/things/t1?small_count=-1", /^invalid query parameter "small_count"/],
    ["/v1/things/t1?nums=1&nums=x", /^invalid query parameter "nums"/],
  ])("answers 400 for %s", async (path, message) => {
    const res = await request("GET", path);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: Code.InvalidArgument, message: expect.stringMatching(message) });
    expect(calls).toHaveLength(0);
  });
});

describe("request body", () => {
  it('decodes body "field" into that field, snake_case or camelCase, ignoring unknown keys', async () => {
    const res = await request(
      "POST",
      "/api/v1alpha1/artifact_types/kubeflow.org/alpha/model/artifacts?artifact.uri=ignored",
      '{"uri":"s3://b/k","typeId":"3","custom_properties":{"p":{"int_value":"5"}},"extra":true}',
    );
    expect(res.status).toBe(200);
    expect(calls[0].method.name).toBe("CreateArtifact");
    expect(onlyInput()).toEqual({
      parent: "artifact_types/kubeflow.org/alpha/model",
      artifact: { uri: "s3://b/k", typeId: "3", customProperties: { p: { intValue: "5" } } },
    });
  });

  it('lets the query set fields outside body "field"', async () => {
    await request("PATCH", "/v1/things/t1?kind=SMALL&inner.name=ignored", '{"name":"n"}');
    expect(onlyInput()).toEqual({ id: "t1", kind: "SMALL", inner: { name: "n" } });
  });

  it('decodes a non-message body "field" from any JSON', async () => {
    await request("POST", "/v1/things/t1:label", '["x","y"]');
    expect(onlyInput()).toEqual({ id: "t1", tags: ["x", "y"] });
  });

  it('decodes body "*" into the whole message; path variables win; the query is not read', async () => {
    const res = await request(
      "POST",
      "/apis/v1beta1/runs/r1:reportMetrics?run_id=q",
      '{"run_id":"other","metrics":[{"name":"acc","node_id":"n1","number_value":0.5,"format":"PERCENTAGE"}]}',
    );
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ results: [] });
    expect(onlyInput()).toEqual({
      runId: "r1",
      metrics: [{ name: "acc", nodeId: "n1", numberValue: 0.5, format: "PERCENTAGE" }],
    });
  });

  it("reads the body whatever the Content-Type", async () => {
    await request("POST", "/api/v1alpha1/artifact_types", '{"name":"t"}', { "content-type": "text/plain" });
    expect(onlyInput()).toEqual({ artifactType: { name: "t" } });
  });

  it("treats an empty body as an empty message", async () => {
    const res = await request("POST", "/api/v1alpha1/artifact_types");
    expect(res.status).toBe(200);
    expect(onlyInput()).toEqual({});
  });

  it.each([
    ["/api/v1alpha1/artifact_types", "{", /^request body is not valid JSON/],
    ["/api/v1alpha1/artifact_types", "[]", /^request body must be a JSON object$/],
    ["/api/v1alpha1/artifact_types", "null", /^request body must be a JSON object$/],
    ["/api/v1alpha1/artifact_types", '"x"', /^request body must be a JSON object$/],
    ["/api/v1alpha1/artifact_types", "12", /^request body must be a JSON object$/],
    ["/apis/v1beta1/runs/r1:reportMetrics", "[]", /^request body must be a JSON object$/],
    ["/apis/v1beta1/runs/r1:reportMetrics", "{oops}", /^request body is not valid JSON/],
    ["/api/v1alpha1/artifact_types", '{"id":"abc"}', /^invalid request body: cannot decode field ml_metadata.ArtifactType.id/],
    ["/apis/v1beta1/runs/r1:reportMetrics", '{"metrics":{}}', /^invalid request body: /],
  ])("answers 400 for POST %s with %s", async (path, body, message) => {
    const res = await request("POST", path, body);
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ code: Code.InvalidArgument, message: expect.stringMatching(message) });
    expect(calls).toHaveLength(0);
  });

  it("answers 413 with apiStatus for a body over the limit", async () => {
    const res = await request("POST", "/api/v1alpha1/artifact_types", JSON.stringify({ name: "x".repeat(BODY_LIMIT) }));
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.json).toMatchObject({
      code: Code.ResourceExhausted,
      details: [{ "@type": "type.googleapis.com/api.Error" }],
    });
    expect(calls).toHaveLength(0);
  });
});

describe("responses and errors", () => {
  it("writes int64 as strings, proto field names, enum names", async () => {
    respond = () =>
      create(GetArtifactResponseSchema, {
        artifact: { id: 123n, typeId: 9007199254740993n, properties: { p: { value: { case: "intValue", value: 5n } } } },
      });
    const res = await request("GET", "/api/v1alpha1/artifact_types/t/artifacts/123");
    expect(res.text).toContain('"type_id":"9007199254740993"');
    expect(res.json).toEqual({
      artifact: { id: "123", type_id: "9007199254740993", properties: { p: { int_value: "5" } } },
    });

    // Only top-level lists are always present: run.resource_references is left out.
    respond = () => create(RunDetailSchema, { run: { id: "r1", storageState: Run_StorageState.STORAGESTATE_ARCHIVED } });
    expect((await request("GET", "/apis/v1beta1/runs/r1")).json).toEqual({
      run: { id: "r1", storage_state: "STORAGESTATE_ARCHIVED" },
    });
  });

  it("always carries top-level lists and maps", async () => {
    respond = () => create(ListEventsResponseSchema);
    expect((await request("GET", "/api/v1alpha1/events/executions/1")).json).toEqual({ events: [], artifacts: {}, executions: {} });

    respond = () => create(ListEventsResponseSchema, { artifacts: { "5": { id: 5n } } });
    expect((await request("GET", "/api/v1alpha1/events/artifacts/5")).json).toEqual({
      events: [],
      artifacts: { "5": { id: "5" } },
      executions: {},
    });

    respond = () => create(ListRunsResponseSchema, { totalSize: 3 });
    expect((await request("GET", "/apis/v1beta1/runs")).json).toEqual({ runs: [], total_size: 3 });
  });

  it("maps a ConnectError to its HTTP status and apiStatus body", async () => {
    respond = () => {
      throw notFound("run r1 not found");
    };
    const res = await request("GET", "/apis/v1beta1/runs/r1");
    expect(res.status).toBe(404);
    expect(res.json).toEqual({
      error: "run r1 not found",
      message: "run r1 not found",
      code: 5,
      details: [{ "@type": "type.googleapis.com/api.Error", error_message: "run r1 not found", error_details: "run r1 not found" }],
    });
  });

  it.each([
    [Code.AlreadyExists, 409],
    [Code.Unauthenticated, 401],
    [Code.Unimplemented, 501],
  ])("maps code %i to HTTP %i", async (code, status) => {
    respond = () => {
      throw new ConnectError("nope", code);
    };
    const res = await request("GET", "/apis/v1beta1/runs/r1");
    expect(res.status).toBe(status);
    expect(res.json).toMatchObject({ code, message: "nope" });
  });

  it("hides anything that is not a ConnectError behind a 500", async () => {
    respond = () => {
      throw new Error("secret database detail");
    };
    const res = await request("GET", "/apis/v1beta1/runs/r1");
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ error: "internal server error", message: "internal server error", code: Code.Internal, details: expect.any(Array) });
    expect(res.text).not.toContain("secret");
  });
});
