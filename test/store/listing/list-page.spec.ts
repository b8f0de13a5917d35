// listPage against real databases: page walks for every sort, every filter op and value kind,
// filter encodings, scopes, page sizes, token errors and query plans.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "../../../src/store/database.js";
import {
  encodePageToken,
  experimentList,
  jobList,
  listPage,
  listQueries,
  pipelineList,
  resolveListRequest,
  runList,
  type ListOptions,
  type ListRequest,
  type ListSpec,
} from "../../../src/store/listing/index.js";
import { databases } from "../../helpers/server.js";
import {
  collationRanks,
  expectedOrder,
  experiments,
  insertAll,
  jobs,
  openTestDatabase,
  pipelines,
  runs,
  T,
  type JobRow,
  type RunRow,
} from "./fixtures.js";

type Row = { id: string } & Record<string, unknown>;
type Value = string | bigint | number | null;

const request = (r: Partial<ListRequest>): ListRequest => ({ pageToken: "", pageSize: 0, sortBy: "", filter: "", ...r });
const filterOf = (...predicates: object[]) => JSON.stringify({ predicates });

async function expectInvalid(promise: Promise<unknown>, message: RegExp): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  expect((err as ConnectError).rawMessage).toMatch(message);
}

// API key → row value, per resource.
const experimentValues: Record<string, (r: (typeof experiments)[number]) => Value> = {
  id: (r) => r.id,
  name: (r) => r.name,
  created_at: (r) => r.createdAt,
  description: (r) => r.description,
};
const runValues: Record<string, (r: RunRow) => Value> = {
  ...(experimentValues as unknown as Record<string, (r: RunRow) => Value>),
  scheduled_at: (r) => r.scheduledAt,
  storage_state: (r) => r.storageState,
};
const jobValues: Record<string, (r: JobRow) => Value> = {
  id: (r) => r.id,
  name: (r) => r.name,
  created_at: (r) => r.createdAt,
  package_id: (r) => r.pipelineId,
};

const resources: Array<{ spec: ListSpec; rows: Row[]; values: Record<string, (r: never) => Value> }> = [
  { spec: experimentList, rows: experiments as unknown as Row[], values: experimentValues },
  { spec: pipelineList, rows: pipelines as unknown as Row[], values: experimentValues },
  { spec: runList, rows: runs as unknown as Row[], values: runValues },
  { spec: jobList, rows: jobs as unknown as Row[], values: jobValues },
];

describe.each(databases)("listPage on %s", (kind) => {
  let db: Database;
  let close: () => Promise<void>;
  let ranks: Map<string, number>;

  beforeAll(async () => {
    ({ db, close } = await openTestDatabase(kind));
    await insertAll(db);
    const texts = [...experiments, ...pipelines, ...runs, ...jobs].flatMap((r) =>
      Object.values(r).filter((v): v is string => typeof v === "string"),
    );
    ranks = await collationRanks(db, [...texts, "", "nope", "zz"]);
  });
  afterAll(() => close?.());

  /** Walks every page; sort_by and filter are repeated with the token when `echo` is set. */
  async function walk(spec: ListSpec, r: Partial<ListRequest>, options: ListOptions = {}, echo = false) {
    const ids: string[] = [];
    const sizes: number[] = [];
    const totals: number[] = [];
    let pageToken = "";
    for (let i = 0; i < 100; i++) {
      const page = await listPage<Row>(
        db,
        spec,
        request({ ...r, pageToken, ...(pageToken && !echo ? { sortBy: "", filter: "" } : {}) }),
        options,
      );
      ids.push(...page.rows.map((row) => row.id));
      sizes.push(page.rows.length);
      totals.push(page.totalSize);
      pageToken = page.nextPageToken;
      if (!pageToken) return { ids, sizes, totals };
    }
    throw new Error("too many pages");
  }

  const lessThan = (a: string, b: string) => ranks.get(a)! < ranks.get(b)!;

  describe("three-page walks for every sort field and direction", () => {
    for (const { spec, rows, values } of resources) {
      for (const field of Object.keys(spec.fields)) {
        for (const direction of ["", " asc", " desc", " DES"]) {
          it(`${spec.resource}s by "${field}${direction}"`, async () => {
            const desc = /des/i.test(direction);
            const expected = expectedOrder(rows, values[field] as (r: Row) => Value, desc, ranks);
            const result = await walk(spec, { sortBy: `${field}${direction}`, pageSize: 3 }, {}, direction === " DES");
            expect(result.ids).toEqual(expected);
            expect(result.sizes).toEqual(rows.length === 9 ? [3, 3, 3] : [3, 3, 1]);
            expect(new Set(result.totals)).toEqual(new Set([rows.length]));
          });
        }
      }
    }

    it("sort by created_at ascending when sort_by is empty, with full rows", async () => {
      const page = await listPage<Row>(db, runList, request({ pageSize: 4 }));
      expect(page.rows.map((r) => r.id)).toEqual(expectedOrder(runs, (r) => r.createdAt, false, ranks).slice(0, 4));
      expect(page.rows[0]).toMatchObject({ id: "r2", name: "ALPHA-2", createdAt: T, workflowManifest: '{"big":"manifest of r2"}' });
      expect(page.totalSize).toBe(9);
    });

    it("walks in pages of 4 and of 1 too", async () => {
      expect((await walk(runList, { sortBy: "name", pageSize: 4 })).sizes).toEqual([4, 4, 1]);
      // Positions on NULL package_ids, in both directions.
      for (const desc of [false, true]) {
        const ones = await walk(jobList, { sortBy: `package_id${desc ? " desc" : ""}`, pageSize: 1 });
        expect(ones.ids).toEqual(expectedOrder(jobs, (r) => r.pipelineId, desc, ranks));
        expect(ones.sizes).toEqual(jobs.map(() => 1));
      }
    });
  });

  describe("filters", () => {
    const nameIs = (value: string) => (r: RunRow) => r.name === value;
    const seconds = (s: number) => [BigInt(s) * 1000n, BigInt(s) * 1000n + 1000n] as const;
    const runCases: Array<[string, object[], (r: RunRow) => boolean]> = [
      ["name EQUALS", [{ key: "name", op: "EQUALS", string_value: "alpha" }], nameIs("alpha")],
      ["name NOT_EQUALS", [{ key: "name", op: "NOT_EQUALS", string_value: "alpha" }], (r) => r.name !== "alpha"],
      ["name GREATER_THAN", [{ key: "name", op: "GREATER_THAN", string_value: "alpha" }], (r) => lessThan("alpha", r.name)],
      ["name GREATER_THAN_EQUALS", [{ key: "name", op: "GREATER_THAN_EQUALS", string_value: "alpha" }], (r) => !lessThan(r.name, "alpha")],
      ["name LESS_THAN", [{ key: "name", op: "LESS_THAN", string_value: "beta" }], (r) => lessThan(r.name, "beta")],
      ["name LESS_THAN_EQUALS", [{ key: "name", op: "LESS_THAN_EQUALS", string_value: "beta" }], (r) => !lessThan("beta", r.name)],
      ["name IN", [{ key: "name", op: "IN", string_values: { values: ["alpha", "beta", "nope"] } }], (r) => ["alpha", "beta"].includes(r.name)],
      ["name IN (empty)", [{ key: "name", op: "IN", string_values: { values: [] } }], () => false],
      ["name EQUALS int_value", [{ key: "name", op: "EQUALS", int_value: 42 }], nameIs("42")],
      ["name IN long_values", [{ key: "name", op: "IN", long_values: { values: ["42", "7"] } }], nameIs("42")],
      ["name IS_SUBSTRING, case-insensitive", [{ key: "name", op: "IS_SUBSTRING", string_value: "lPhA" }], (r) => r.name.toLowerCase().includes("alpha")],
      ["name IS_SUBSTRING %", [{ key: "name", op: "IS_SUBSTRING", string_value: "%" }], nameIs("50%_off")],
      ["name IS_SUBSTRING _", [{ key: "name", op: "IS_SUBSTRING", string_value: "_" }], (r) => r.name.includes("_")],
      ["name IS_SUBSTRING 0%", [{ key: "name", op: "IS_SUBSTRING", string_value: "0%" }], nameIs("50%_off")],
      ["name IS_SUBSTRING 5_", [{ key: "name", op: "IS_SUBSTRING", string_value: "5_" }], nameIs("5_0")],
      ["name IS_SUBSTRING backslash", [{ key: "name", op: "IS_SUBSTRING", string_value: "\\" }], nameIs("a\\b")],
      ["name IS_SUBSTRING empty", [{ key: "name", op: "IS_SUBSTRING", string_value: "" }], () => true],
      ["id IN", [{ key: "id", op: "IN", string_values: { values: ["r1", "r2", "zz"] } }], (r) => ["r1", "r2"].includes(r.id)],
      ["id GREATER_THAN", [{ key: "id", op: "GREATER_THAN", string_value: "r5" }], (r) => lessThan("r5", r.id)],
      ["description EQUALS empty", [{ key: "description", op: "EQUALS", string_value: "" }], (r) => r.description === ""],
      ["created_at EQUALS int seconds", [{ key: "created_at", op: "EQUALS", int_value: 1600000001 }], (r) => r.createdAt >= seconds(1600000001)[0] && r.createdAt < seconds(1600000001)[1]],
      ["created_at NOT_EQUALS long seconds", [{ key: "created_at", op: "NOT_EQUALS", long_value: "1600000001" }], (r) => r.createdAt < T + 1000n || r.createdAt >= T + 2000n],
      ["created_at GREATER_THAN int seconds", [{ key: "created_at", op: "GREATER_THAN", int_value: 1600000001 }], (r) => r.createdAt >= T + 2000n],
      ["created_at GREATER_THAN_EQUALS string seconds", [{ key: "created_at", op: "GREATER_THAN_EQUALS", string_value: "1600000001" }], (r) => r.createdAt >= T + 1000n],
      ["created_at LESS_THAN long seconds", [{ key: "created_at", op: "LESS_THAN", long_value: 1600000001 }], (r) => r.createdAt < T + 1000n],
      ["created_at LESS_THAN_EQUALS int seconds", [{ key: "created_at", op: "LESS_THAN_EQUALS", int_value: 1600000001 }], (r) => r.createdAt < T + 2000n],
      ["created_at EQUALS timestamp", [{ key: "created_at", op: "EQUALS", timestamp_value: "2020-09-13T12:26:41.500Z" }], (r) => r.createdAt === T + 1500n],
      ["created_at NOT_EQUALS timestamp", [{ key: "created_at", op: "NOT_EQUALS", timestamp_value: "2020-09-13T12:26:41.500Z" }], (r) => r.createdAt !== T + 1500n],
      ["created_at GREATER_THAN timestamp", [{ key: "created_at", op: "GREATER_THAN", timestamp_value: "2020-09-13T12:26:41.5Z" }], (r) => r.createdAt > T + 1500n],
      ["created_at GREATER_THAN_EQUALS timestamp", [{ key: "created_at", op: "GREATER_THAN_EQUALS", timestamp_value: "2020-09-13T12:26:41.5Z" }], (r) => r.createdAt >= T + 1500n],
      ["created_at LESS_THAN RFC 3339 string", [{ key: "created_at", op: "LESS_THAN", string_value: "2020-09-13T14:26:41.999+02:00" }], (r) => r.createdAt < T + 1999n],
      ["created_at LESS_THAN_EQUALS RFC 3339 string", [{ key: "created_at", op: "LESS_THAN_EQUALS", string_value: "2020-09-13T12:26:41.999Z" }], (r) => r.createdAt <= T + 1999n],
      ["created_at IN long_values", [{ key: "created_at", op: "IN", long_values: { values: ["1600000000", 1600000003] } }], (r) => [T, T + 3000n].includes(r.createdAt)],
      ["created_at IN int_values", [{ key: "created_at", op: "IN", int_values: { values: [1600000002] } }], (r) => r.createdAt === T + 2000n],
      ["created_at IN string_values", [{ key: "created_at", op: "IN", string_values: { values: ["2020-09-13T12:26:41Z", "2020-09-13T12:26:41.999Z"] } }], (r) => [T + 1000n, T + 1999n].includes(r.createdAt)],
      ["created_at IN mixed seconds and timestamps", [{ key: "created_at", op: "IN", string_values: { values: ["1600000000", "2020-09-13T12:26:41.5Z"] } }], (r) => [T, T + 1500n].includes(r.createdAt)],
      ["scheduled_at EQUALS timestamp", [{ key: "scheduled_at", op: "EQUALS", timestamp_value: "2020-09-13T12:26:45Z" }], (r) => r.scheduledAt === T + 5000n],
      ["scheduled_at LESS_THAN int seconds", [{ key: "scheduled_at", op: "LESS_THAN", int_value: 1600000005 }], (r) => r.scheduledAt < T + 5000n],
      ["storage_state EQUALS ARCHIVED (the UI)", [{ key: "storage_state", op: "EQUALS", string_value: "STORAGESTATE_ARCHIVED" }], (r) => r.storageState === 1],
      ["storage_state NOT_EQUALS ARCHIVED (the UI)", [{ key: "storage_state", op: "NOT_EQUALS", string_value: "STORAGESTATE_ARCHIVED" }], (r) => r.storageState !== 1],
      ["storage_state EQUALS int_value", [{ key: "storage_state", op: "EQUALS", int_value: 0 }], (r) => r.storageState === 0],
      ["storage_state EQUALS long_value", [{ key: "storage_state", op: "EQUALS", long_value: "1" }], (r) => r.storageState === 1],
      ["storage_state GREATER_THAN", [{ key: "storage_state", op: "GREATER_THAN", string_value: "STORAGESTATE_AVAILABLE" }], (r) => r.storageState > 0],
      ["storage_state IN int_values", [{ key: "storage_state", op: "IN", int_values: { values: [0, 1] } }], () => true],
      ["storage_state IN string_values", [{ key: "storage_state", op: "IN", string_values: { values: ["STORAGESTATE_AVAILABLE"] } }], (r) => r.storageState === 0],
      [
        "three predicates AND-ed",
        [
          { key: "storage_state", op: "EQUALS", string_value: "STORAGESTATE_AVAILABLE" },
          { key: "name", op: "IS_SUBSTRING", string_value: "a" },
          { key: "created_at", op: "GREATER_THAN_EQUALS", int_value: 1600000001 },
        ],
        (r) => r.storageState === 0 && r.name.includes("a") && r.createdAt >= T + 1000n,
      ],
      [
        "the same key twice",
        [
          { key: "created_at", op: "GREATER_THAN", int_value: 1600000000 },
          { key: "created_at", op: "LESS_THAN", int_value: 1600000003 },
        ],
        (r) => r.createdAt >= T + 1000n && r.createdAt < T + 3000n,
      ],
    ];

    for (const [title, predicates, match] of runCases) {
      it(`runs: ${title}, walked by name desc in pages of 2`, async () => {
        const matching = runs.filter(match);
        const result = await walk(runList, { filter: filterOf(...predicates), sortBy: "name desc", pageSize: 2 }, {}, title.includes("IN"));
        expect(result.ids).toEqual(expectedOrder(matching, (r) => r.name, true, ranks));
        expect(new Set(result.totals)).toEqual(new Set([matching.length]));
      });
    }

    // NULL package_id behaves like "".
    const pkg = (r: JobRow) => r.pipelineId ?? "";
    const jobCases: Array<[string, object, (r: JobRow) => boolean]> = [
      ["EQUALS empty", { key: "package_id", op: "EQUALS", string_value: "" }, (r) => pkg(r) === ""],
      ["EQUALS p1", { key: "package_id", op: "EQUALS", string_value: "p1" }, (r) => pkg(r) === "p1"],
      ["NOT_EQUALS p1", { key: "package_id", op: "NOT_EQUALS", string_value: "p1" }, (r) => pkg(r) !== "p1"],
      ["NOT_EQUALS empty", { key: "package_id", op: "NOT_EQUALS", string_value: "" }, (r) => pkg(r) !== ""],
      ["IN with empty", { key: "package_id", op: "IN", string_values: { values: ["", "p2"] } }, (r) => ["", "p2"].includes(pkg(r))],
      ["LESS_THAN p2", { key: "package_id", op: "LESS_THAN", string_value: "p2" }, (r) => lessThan(pkg(r), "p2")],
      ["LESS_THAN_EQUALS empty", { key: "package_id", op: "LESS_THAN_EQUALS", string_value: "" }, (r) => pkg(r) === ""],
      ["GREATER_THAN empty", { key: "package_id", op: "GREATER_THAN", string_value: "" }, (r) => pkg(r) !== ""],
      ["GREATER_THAN_EQUALS p2", { key: "package_id", op: "GREATER_THAN_EQUALS", string_value: "p2" }, (r) => pkg(r) === "p2"],
      ["IS_SUBSTRING P", { key: "package_id", op: "IS_SUBSTRING", string_value: "P" }, (r) => pkg(r).startsWith("p")],
      ["IS_SUBSTRING empty", { key: "package_id", op: "IS_SUBSTRING", string_value: "" }, () => true],
      ["name IN", { key: "name", op: "IN", string_values: { values: ["hourly", "once"] } }, (r) => ["hourly", "once"].includes(r.name)],
    ];
    for (const [title, predicate, match] of jobCases) {
      it(`jobs: package_id ${title}, walked by package_id in pages of 2`, async () => {
        const matching = jobs.filter(match);
        const result = await walk(jobList, { filter: filterOf(predicate), sortBy: "package_id", pageSize: 2 });
        expect(result.ids).toEqual(expectedOrder(matching, (r) => r.pipelineId, false, ranks));
        expect(new Set(result.totals)).toEqual(new Set([matching.length]));
      });
    }

    it("apply to pipelines and experiments", async () => {
      const filter = filterOf({ key: "name", op: "IS_SUBSTRING", string_value: "AN" }, { key: "created_at", op: "LESS_THAN", int_value: 1600000002 });
      const expected = ["p6"]; // banana (mango is created at T+2000)
      expect((await walk(pipelineList, { filter, pageSize: 1 })).ids).toEqual(expected);
      const byDescription = await walk(experimentList, { filter: filterOf({ key: "description", op: "IN", string_values: { values: ["a", "c"] } }), sortBy: "name desc", pageSize: 1 });
      expect(byDescription.ids).toEqual(["e3", "e6", "e2"]);
      expect(byDescription.totals).toEqual([3, 3, 3]);
    });

    it("is read in every encoding, also when repeated with the token", async () => {
      const json = filterOf({ key: "name", op: "IS_SUBSTRING", string_value: "%_o" }, { key: "description", op: "NOT_EQUALS", string_value: "a+b c" });
      const form = (text: string) => new URLSearchParams({ f: text }).toString().slice(2);
      const encodings = [
        json,
        encodeURIComponent(json),
        encodeURIComponent(encodeURIComponent(json)),
        form(json),
        form(form(json)),
        Buffer.from(json).toString("base64"),
        Buffer.from(json).toString("base64url"),
      ];
      for (const filter of encodings) {
        expect((await walk(runList, { filter, pageSize: 1 }, {}, true)).ids).toEqual(["r1"]);
      }
      // Two rows, so that the token is used: every encoding matches the token's filter.
      const two = filterOf({ key: "name", op: "IS_SUBSTRING", string_value: "_" }, { key: "name", op: "NOT_EQUALS", string_value: "5_0" });
      const first = await listPage<Row>(db, runList, request({ filter: two, pageSize: 1 }));
      for (const filter of [encodeURIComponent(encodeURIComponent(two)), Buffer.from(two).toString("base64url")]) {
        const second = await listPage<Row>(db, runList, request({ filter, pageSize: 1, pageToken: first.nextPageToken }));
        expect([...first.rows, ...second.rows].map((r) => r.id)).toEqual(["r1", "r9"]);
        expect(second.nextPageToken).toBe("");
      }
    });

    it("rejects unknown keys and bad op/value combinations", async () => {
      await expectInvalid(listPage(db, runList, request({ filter: filterOf({ key: "status", op: "EQUALS", string_value: "x" }) })), /unrecognized field "status"/);
      await expectInvalid(listPage(db, jobList, request({ filter: filterOf({ key: "storage_state", op: "EQUALS", int_value: 0 }) })), /unrecognized field "storage_state"/);
      await expectInvalid(listPage(db, runList, request({ filter: filterOf({ key: "name", op: "IN", string_value: "x" }) })), /IN operator/);
      await expectInvalid(listPage(db, runList, request({ filter: filterOf({ key: "name", op: "IS_SUBSTRING", int_value: 3 }) })), /IS_SUBSTRING/);
      await expectInvalid(listPage(db, runList, request({ filter: filterOf({ key: "name", op: "EQUALS" }) })), /no value set/);
      await expectInvalid(listPage(db, runList, request({ filter: filterOf({ key: "storage_state", op: "EQUALS", string_value: "GONE" }) })), /storage_state/);
      await expectInvalid(listPage(db, runList, request({ filter: "%7B" })), /^invalid filter "%7B"/);
    });
  });

  describe("scopes", () => {
    it("combine with filter, sort and pages; totals reflect them", async () => {
      const filter = filterOf({ key: "storage_state", op: "EQUALS", string_value: "STORAGESTATE_AVAILABLE" });
      const inE1 = runs.filter((r) => r.experimentId === "E1" && r.storageState === 0);
      const result = await walk(runList, { filter, sortBy: "name desc", pageSize: 2 }, { scope: { experimentId: "E1" } });
      expect(result.ids).toEqual(expectedOrder(inE1, (r) => r.name, true, ranks));
      expect(new Set(result.totals)).toEqual(new Set([inE1.length]));

      const byJob = await walk(runList, { sortBy: "created_at desc", pageSize: 2 }, { scope: { jobId: "J1", experimentId: undefined } });
      expect(byJob.ids).toEqual(["r7", "r9", "r8"]);
      expect(byJob.totals).toEqual([3, 3]);

      const noJob = await walk(runList, { pageSize: 20 }, { scope: { jobId: null } });
      expect(noJob.ids.sort()).toEqual(runs.filter((r) => r.jobId === null).map((r) => r.id).sort());

      const none = await listPage(db, jobList, request({}), { scope: { experimentId: "nope" } });
      expect(none).toEqual({ rows: [], totalSize: 0, nextPageToken: "" });
    });

    it("must be declared by the spec", async () => {
      await expect(listPage(db, runList, request({}), { scope: { status: "x" } })).rejects.toThrow(/not a declared scope/);
    });
  });

  describe("select and omit", () => {
    it("pass through to Prisma, keeping the list order", async () => {
      const omitted = await listPage<Row>(db, runList, request({ sortBy: "name", pageSize: 3 }), { omit: { workflowManifest: true, runtimeManifest: true } });
      expect(omitted.rows.map((r) => r.id)).toEqual(expectedOrder(runs, (r) => r.name, false, ranks).slice(0, 3));
      expect(omitted.rows[0]).not.toHaveProperty("workflowManifest");
      expect(omitted.rows[0]).toHaveProperty("status", "Succeeded");
      const selected = await listPage<Row>(db, runList, request({ sortBy: "name desc", pageSize: 2 }), { select: { name: true } });
      expect(selected.rows).toEqual(expectedOrder(runs, (r) => r.name, true, ranks).slice(0, 2).map((id) => ({ id, name: runs.find((r) => r.id === id)!.name })));
    });
  });

  describe("page tokens and request errors", () => {
    it("reject a token with another sort, direction or filter, or of another resource, and garbled tokens", async () => {
      const first = await listPage(db, experimentList, request({ sortBy: "name", pageSize: 2, filter: filterOf({ key: "name", op: "NOT_EQUALS", string_value: "x" }) }));
      const pageToken = first.nextPageToken;
      expect(pageToken).not.toBe("");
      const mismatch = /^page token does not match the supplied sort_by and\/or filter$/;
      await expectInvalid(listPage(db, experimentList, request({ pageToken, sortBy: "name desc" })), mismatch);
      await expectInvalid(listPage(db, experimentList, request({ pageToken, sortBy: "created_at" })), mismatch);
      await expectInvalid(listPage(db, experimentList, request({ pageToken, filter: filterOf({ key: "name", op: "NOT_EQUALS", string_value: "y" }) })), mismatch);
      await expectInvalid(listPage(db, pipelineList, request({ pageToken })), /^invalid page token/);
      for (const garbled of ["x", "%%%", pageToken.slice(0, -3), `${pageToken}AAAA`, Buffer.from("{}").toString("base64url")]) {
        await expectInvalid(listPage(db, experimentList, request({ pageToken: garbled })), /^invalid page token/);
      }
      const ok = await listPage<Row>(db, experimentList, request({ pageToken, sortBy: "NAME asc", pageSize: 2 }));
      expect(ok.rows).toHaveLength(2);
    });

    it("keep BigInt positions exact", async () => {
      // A position beyond 2^53 that only exact arithmetic distinguishes from its neighbour.
      const pageToken = encodePageToken({
        resource: "run",
        sort: { field: "created_at", desc: true },
        filter: "",
        after: { value: "9007199254740993", id: "" },
      });
      const page = await listPage<Row>(db, runList, request({ pageToken, pageSize: 20 }));
      expect(page.rows).toHaveLength(9);
      const past = encodePageToken({ resource: "run", sort: { field: "created_at", desc: false }, filter: "", after: { value: "9007199254740993", id: "" } });
      expect((await listPage(db, runList, request({ pageToken: past }))).rows).toEqual([]);
    });

    it("reject a negative page_size and bad sort_by", async () => {
      await expectInvalid(listPage(db, runList, request({ pageSize: -1 })), /page_size/);
      await expectInvalid(listPage(db, runList, request({ sortBy: "name desc please" })), /invalid sort_by/);
      await expectInvalid(listPage(db, jobList, request({ sortBy: "description" })), /invalid sort_by field "description".*id, name, created_at, package_id/);
    });
  });

  describe("page sizes", () => {
    let bulk: Database;
    let closeBulk: () => Promise<void>;
    beforeAll(async () => {
      ({ db: bulk, close: closeBulk } = await openTestDatabase(kind));
      await bulk.prisma.experiment.createMany({
        data: Array.from({ length: 205 }, (_, i) => ({ id: `x${String(i).padStart(3, "0")}`, name: `n${i}`, description: "", createdAt: T + BigInt(i % 10) })),
      });
    });
    afterAll(() => closeBulk?.());

    it("0 means 20, above 200 means 200", async () => {
      const twenty = await listPage(bulk, experimentList, request({ pageSize: 0 }));
      expect(twenty.rows).toHaveLength(20);
      expect(twenty.totalSize).toBe(205);
      const capped = await listPage(bulk, experimentList, request({ pageSize: 5000 }));
      expect(capped.rows).toHaveLength(200);
      const rest = await listPage(bulk, experimentList, request({ pageSize: 5000, pageToken: capped.nextPageToken }));
      expect(rest.rows).toHaveLength(5);
      expect(rest.nextPageToken).toBe("");
      const exact = await listPage(bulk, experimentList, request({ pageSize: 205 }));
      expect(exact.rows).toHaveLength(200);
    });
  });

  describe("query plans", () => {
    const sorts = resources.flatMap(({ spec }) =>
      Object.keys(spec.fields).flatMap((f) => [`${f}`, `${f} desc`].map((s) => [spec.resource, s, spec] as const)),
    );

    // Positions inside the data, NULL ones included for the nullable column.
    const positions = (spec: ListSpec, field: string) => {
      const type = spec.fields[field]!.type;
      const value = type === "millis" ? T + 1000n : type === "string" ? "m" : 0;
      return spec.fields[field]!.nullable ? [undefined, { value, id: "m" }, { value: null, id: "m" }] : [undefined, { value, id: "m" }];
    };

    it.each(sorts)("%ss by %s: every query seeks an index and never sorts", async (_, sortBy, spec) => {
      const resolved = resolveListRequest(spec, request({ sortBy, pageSize: 20 }));
      for (const after of positions(spec, resolved.sort.field)) {
        for (const page of listQueries(db.provider, spec, { ...resolved, after }).pages) {
          const query = page(21);
          if (db.provider === "sqlite") {
            const plan = await db.prisma.$queryRawUnsafe<Array<{ detail: string }>>(`EXPLAIN QUERY PLAN ${query.text}`, ...query.params);
            const text = plan.map((p) => p.detail).join("\n");
            expect(text).toMatch(after ? /SEARCH .* USING (COVERING )?INDEX/ : /(SCAN|SEARCH) .* USING (COVERING )?INDEX/);
            expect(text).not.toMatch(/TEMP B-TREE/);
          } else {
            const [, , plan] = await db.prisma.$transaction([
              db.prisma.$executeRawUnsafe("SET LOCAL enable_seqscan = off"),
              db.prisma.$executeRawUnsafe("SET LOCAL enable_bitmapscan = off"),
              db.prisma.$queryRawUnsafe<Array<{ "QUERY PLAN": string }>>(`EXPLAIN ${query.text}`, ...query.params),
            ]);
            const text = plan.map((p) => p["QUERY PLAN"]).join("\n");
            expect(text).toMatch(/Index (Only )?Scan/);
            if (after) expect(text).toMatch(/Index Cond/);
            expect(text).not.toMatch(/Sort/);
          }
        }
      }
    });
  });
});
