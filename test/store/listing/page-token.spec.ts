// Page tokens and request resolution: sort, page size, token binding (no database).
import { create } from "@bufbuild/protobuf";
import { ListExperimentsRequestSchema } from "../../../gen/proto/kfp/experiment_pb.js";
import { ListJobsRequestSchema } from "../../../gen/proto/kfp/job_pb.js";
import { ListPipelinesRequestSchema } from "../../../gen/proto/kfp/pipeline_pb.js";
import { ListRunsRequestSchema } from "../../../gen/proto/kfp/run_pb.js";
import { describe, expect, it } from "vitest";
import {
  decodePageToken,
  encodePageToken,
  experimentList,
  jobList,
  normalizePageSize,
  parseSortBy,
  pipelineList,
  resolveListRequest,
  runList,
  type ListRequest,
  type PageTokenContent,
} from "../../../src/store/listing/index.js";
import { expectInvalidArgument as expectInvalid } from "../../helpers/thrown.js";


const request = (r: Partial<ListRequest>): ListRequest => ({ pageToken: "", pageSize: 0, sortBy: "", filter: "", ...r });
const rawToken = (body: unknown) => Buffer.from(JSON.stringify(body)).toString("base64url");
const token = (t: Partial<PageTokenContent> = {}): PageTokenContent => ({
  resource: "run",
  sort: { field: "created_at", desc: false },
  filter: "",
  after: { value: "1600000000123", id: "r1" },
  ...t,
});

describe("page_size", () => {
  it("maps 0 to 20, caps at 200 and rejects negatives", () => {
    expect(normalizePageSize(0)).toBe(20);
    expect(normalizePageSize(1)).toBe(1);
    expect(normalizePageSize(200)).toBe(200);
    expect(normalizePageSize(201)).toBe(200);
    expect(normalizePageSize(2 ** 31 - 1)).toBe(200);
    expectInvalid(() => normalizePageSize(-1), /page_size/);
  });
});

describe("sort_by", () => {
  it("reads field, asc, desc and des in any case and spacing", () => {
    expect(parseSortBy(runList, "")).toEqual({ field: "created_at", desc: false });
    expect(parseSortBy(runList, "   ")).toEqual({ field: "created_at", desc: false });
    expect(parseSortBy(runList, "name")).toEqual({ field: "name", desc: false });
    expect(parseSortBy(runList, " NAME  Asc ")).toEqual({ field: "name", desc: false });
    expect(parseSortBy(runList, "scheduled_at desc")).toEqual({ field: "scheduled_at", desc: true });
    expect(parseSortBy(runList, "Storage_State\tDES")).toEqual({ field: "storage_state", desc: true });
    expect(parseSortBy(jobList, "package_id desc")).toEqual({ field: "package_id", desc: true });
  });

  it("rejects more words, other directions and unknown fields, naming the valid fields", () => {
    expectInvalid(() => parseSortBy(runList, "name desc x"), /invalid sort_by "name desc x"/);
    expectInvalid(() => parseSortBy(runList, "name up"), /invalid sort_by "name up"/);
    expectInvalid(() => parseSortBy(experimentList, "scheduled_at"), /"scheduled_at".*id, name, created_at, description/);
    expectInvalid(() => parseSortBy(pipelineList, "status desc"), /invalid sort_by field "status"/);
    expectInvalid(() => parseSortBy(runList, "constructor"), /invalid sort_by field "constructor"/);
  });
});

describe("resolveListRequest without a token", () => {
  it("takes the generated List*Request messages as they are", () => {
    const cases = [
      [experimentList, create(ListExperimentsRequestSchema, { sortBy: "name des", pageSize: 5 })],
      [pipelineList, create(ListPipelinesRequestSchema, { sortBy: "name des", pageSize: 5 })],
      [runList, create(ListRunsRequestSchema, { sortBy: "name des", pageSize: 5 })],
      [jobList, create(ListJobsRequestSchema, { sortBy: "name des", pageSize: 5 })],
    ] as const;
    for (const [spec, message] of cases) {
      const resolved = resolveListRequest(spec, message);
      expect(resolved).toMatchObject({ pageSize: 5, sort: { field: "name", desc: true }, conditions: [] });
      expect(resolved.after).toBeUndefined();
    }
  });
});

describe("page tokens", () => {
  it("round-trip exactly, BigInt-sized values and unicode included", () => {
    const t = token({ after: { value: "9223372036854775807", id: "ü/+=" }, filter: '{"predicates":[]}' });
    const text = encodePageToken(t);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodePageToken(text)).toEqual(t);
    expect(decodePageToken(Buffer.from(text, "base64url").toString("base64"))).toEqual(t); // standard alphabet too
    expect(decodePageToken(encodePageToken(token({ after: { value: null, id: "x" } }))).after.value).toBeNull();
  });

  it("rejects garbled tokens", () => {
    const garbled = [
      "!!!",
      "a",
      Buffer.from("not json").toString("base64url"),
      Buffer.from([0xff, 0xfe, 0x7b]).toString("base64url"),
      rawToken([]),
      rawToken("x"),
      rawToken({}),
      rawToken({ ...JSON.parse(Buffer.from(encodePageToken(token()), "base64url").toString()), v: 2 }),
      rawToken({ v: 1, resource: "run", sort: { field: "name", desc: "yes" }, filter: "", after: { value: "a", id: "b" } }),
      rawToken({ v: 1, resource: "run", sort: { field: "name", desc: false }, filter: "", after: { value: 5, id: "b" } }),
      rawToken({ v: 1, resource: "run", sort: { field: "name", desc: false }, filter: null, after: { value: "a", id: "b" } }),
      rawToken({ v: 1, resource: "run", sort: { field: "name", desc: false }, filter: "", after: { value: "a" } }),
      rawToken({ v: 1, resource: 7, sort: { field: "name", desc: false }, filter: "", after: { value: "a", id: "b" } }),
    ];
    for (const text of garbled) expectInvalid(() => decodePageToken(text), /^invalid page token/);
  });
});

describe("resolveListRequest with a page token", () => {
  const filter = JSON.stringify({ predicates: [{ key: "name", op: "EQUALS", string_value: "x" }] });
  const canonical = resolveListRequest(runList, request({ filter })).filter.canonical;

  it("takes sort, filter and position from the token, page size from the request", () => {
    const t = encodePageToken(token({ sort: { field: "name", desc: true }, filter: canonical, after: { value: "x", id: "r9" } }));
    const resolved = resolveListRequest(runList, request({ pageToken: t, pageSize: 7 }));
    expect(resolved.sort).toEqual({ field: "name", desc: true });
    expect(resolved.filter.canonical).toBe(canonical);
    expect(resolved.conditions).toHaveLength(1);
    expect(resolved.after).toEqual({ value: "x", id: "r9" });
    expect(resolved.pageSize).toBe(7);
  });

  it("converts the position to the column's type", () => {
    const millis = resolveListRequest(runList, request({ pageToken: encodePageToken(token()) }));
    expect(millis.after!.value).toBe(1600000000123n);
    const state = encodePageToken(token({ sort: { field: "storage_state", desc: false }, after: { value: "1", id: "a" } }));
    expect(resolveListRequest(runList, request({ pageToken: state })).after!.value).toBe(1);
  });

  it("accepts a sort_by and filter equal to the token's, however spelled", () => {
    const t = encodePageToken(token({ sort: { field: "name", desc: true }, filter: canonical, after: { value: "x", id: "r9" } }));
    for (const sortBy of ["name desc", "NAME DES", " name  Desc "]) {
      expect(resolveListRequest(runList, request({ pageToken: t, sortBy, filter: encodeURIComponent(filter) })).sort.field).toBe("name");
    }
  });

  it("rejects a sort_by or filter that differs from the token's", () => {
    const t = encodePageToken(token({ sort: { field: "name", desc: false }, filter: canonical, after: { value: "x", id: "r9" } }));
    const mismatch = /^page token does not match the supplied sort_by and\/or filter$/;
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: t, sortBy: "name desc" })), mismatch);
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: t, sortBy: "created_at" })), mismatch);
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: t, filter: '{"predicates":[{"key":"name","op":"EQUALS","string_value":"y"}]}' })), mismatch);
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: t, filter: "{}" })), mismatch);
    const unfiltered = encodePageToken(token());
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: unfiltered, filter })), mismatch);
  });

  it("rejects a token of another resource, an unknown sort field, a bad position or a bad filter", () => {
    const t = encodePageToken(token());
    expectInvalid(() => resolveListRequest(experimentList, request({ pageToken: t })), /^invalid page token: .*runs, not experiments/);
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: encodePageToken(token({ sort: { field: "status", desc: false } })) })), /^invalid page token/);
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: encodePageToken(token({ after: { value: "12a", id: "x" } })) })), /^invalid page token/);
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: encodePageToken(token({ after: { value: null, id: "x" } })) })), /^invalid page token/);
    const sortedByState = token({ sort: { field: "storage_state", desc: false }, after: { value: "1.5", id: "x" } });
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: encodePageToken(sortedByState) })), /^invalid page token/);
    const badFilter = token({ filter: '{"predicates":[{"key":"nope","op":"EQUALS","string_value":"x"}]}' });
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: encodePageToken(badFilter) })), /^invalid page token/);
    expectInvalid(() => resolveListRequest(runList, request({ pageToken: encodePageToken(token({ filter: "garbage" })) })), /^invalid page token/);
  });

  it("accepts a NULL position only for a nullable column", () => {
    const t = encodePageToken(token({ resource: "job", sort: { field: "package_id", desc: false }, after: { value: null, id: "j1" } }));
    expect(resolveListRequest(jobList, request({ pageToken: t })).after).toEqual({ value: null, id: "j1" });
  });
});
