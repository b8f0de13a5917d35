// Filter predicates → conditions, value conversion and error cases (no database).
import { describe, expect, it } from "vitest";
import { compileFilter, jobList, parseFilter, pipelineList, runList, type ListSpec } from "../../../src/store/listing/index.js";
import { parseRfc3339Millis } from "../../../src/store/listing/filter.js";
import { countQuery, escapeLike } from "../../../src/store/listing/sql.js";
import { expectInvalidArgument as expectInvalid } from "../../helpers/thrown.js";

const T = 1600000000000n; // 2020-09-13T12:26:40Z

function compile(spec: ListSpec, ...predicates: object[]) {
  return compileFilter(spec, parseFilter(JSON.stringify({ predicates })).filter);
}


describe("compileFilter", () => {
  it("maps string comparisons, IN and IS_SUBSTRING to their columns", () => {
    expect(compile(runList, { key: "name", op: "EQUALS", string_value: "a" })).toEqual([{ kind: "compare", column: "name", op: "=", value: "a" }]);
    expect(compile(runList, { key: "description", op: "NOT_EQUALS", int_value: 5 })).toEqual([{ kind: "compare", column: "description", op: "<>", value: "5" }]);
    expect(compile(runList, { key: "id", op: "GREATER_THAN_EQUALS", long_value: "12" })).toEqual([{ kind: "compare", column: "id", op: ">=", value: "12" }]);
    expect(compile(runList, { key: "name", op: "IN", string_values: { values: ["a", "b"] } })).toEqual([{ kind: "in", column: "name", values: ["a", "b"] }]);
    expect(compile(runList, { key: "name", op: "IN", int_values: { values: [1] } })).toEqual([{ kind: "in", column: "name", values: ["1"] }]);
    expect(compile(runList, { key: "name", op: "IS_SUBSTRING", string_value: "%_" })).toEqual([{ kind: "substring", column: "name", needle: "%_" }]);
  });

  it("reads int and long values of millisecond fields as epoch seconds, at second granularity", () => {
    const s = { column: "created_at", kind: "compare" };
    expect(compile(runList, { key: "created_at", op: "EQUALS", int_value: 1600000000 })).toEqual([
      { kind: "and", conditions: [{ ...s, op: ">=", value: T }, { ...s, op: "<", value: T + 1000n }] },
    ]);
    expect(compile(runList, { key: "created_at", op: "NOT_EQUALS", long_value: "1600000000" })).toEqual([
      { kind: "or", conditions: [{ ...s, op: "<", value: T }, { ...s, op: ">=", value: T + 1000n }] },
    ]);
    expect(compile(runList, { key: "created_at", op: "GREATER_THAN", int_value: 1600000000 })).toEqual([{ ...s, op: ">=", value: T + 1000n }]);
    expect(compile(runList, { key: "created_at", op: "GREATER_THAN_EQUALS", string_value: "1600000000" })).toEqual([{ ...s, op: ">=", value: T }]);
    expect(compile(runList, { key: "created_at", op: "LESS_THAN", int_value: 1600000000 })).toEqual([{ ...s, op: "<", value: T }]);
    expect(compile(runList, { key: "created_at", op: "LESS_THAN_EQUALS", int_value: 1600000000 })).toEqual([{ ...s, op: "<", value: T + 1000n }]);
  });

  it("reads timestamps and RFC 3339 strings to the millisecond", () => {
    const s = { column: "scheduled_at", kind: "compare" };
    expect(compile(runList, { key: "scheduled_at", op: "EQUALS", timestamp_value: "2020-09-13T12:26:40.123456Z" })).toEqual([{ ...s, op: "=", value: T + 123n }]);
    expect(compile(runList, { key: "scheduled_at", op: "GREATER_THAN", string_value: "2020-09-13T14:26:40.5+02:00" })).toEqual([{ ...s, op: ">=", value: T + 501n }]);
    expect(compile(runList, { key: "scheduled_at", op: "LESS_THAN_EQUALS", timestamp_value: "2020-09-13T12:26:40Z" })).toEqual([{ ...s, op: "<", value: T + 1n }]);
    expect(compile(runList, { key: "created_at", op: "IN", string_values: { values: ["2020-09-13T12:26:40Z", "2020-09-13T12:26:41.001Z"] } })).toEqual([
      { kind: "in", column: "created_at", values: [T, T + 1001n] },
    ]);
    expect(compile(runList, { key: "created_at", op: "IN", long_values: { values: ["1600000000"] } })).toEqual([
      { kind: "or", conditions: [{ kind: "and", conditions: [{ column: "created_at", kind: "compare", op: ">=", value: T }, { column: "created_at", kind: "compare", op: "<", value: T + 1000n }] }] },
    ]);
  });

  it("reads storage states as names, short names or numbers", () => {
    const c = (value: number, op = "=") => [{ kind: "compare", column: "storage_state", op, value }];
    expect(compile(runList, { key: "storage_state", op: "EQUALS", string_value: "STORAGESTATE_ARCHIVED" })).toEqual(c(1));
    expect(compile(runList, { key: "storage_state", op: "NOT_EQUALS", string_value: "storagestate_archived" })).toEqual(c(1, "<>"));
    expect(compile(runList, { key: "storage_state", op: "EQUALS", string_value: "AVAILABLE" })).toEqual(c(0));
    expect(compile(runList, { key: "storage_state", op: "EQUALS", int_value: 1 })).toEqual(c(1));
    expect(compile(runList, { key: "storage_state", op: "LESS_THAN", long_value: "1" })).toEqual(c(1, "<"));
    expect(compile(runList, { key: "storage_state", op: "IN", string_values: { values: ["STORAGESTATE_AVAILABLE", "1"] } })).toEqual([
      { kind: "in", column: "storage_state", values: [0, 1] },
    ]);
  });

  it("reads integers for int fields", () => {
    const spec: ListSpec = { ...runList, fields: { count: { column: "fired_count", type: "int" } } };
    expect(compile(spec, { key: "count", op: "GREATER_THAN", long_value: "3" }, { key: "count", op: "IN", string_values: { values: ["1", " 2"] } })).toEqual([
      { kind: "compare", column: "fired_count", op: ">", value: 3 },
      { kind: "in", column: "fired_count", values: [1, 2] },
    ]);
    expectInvalid(() => compile(spec, { key: "count", op: "EQUALS", string_value: "1.5" }), /invalid value "1.5" for "count": expected an integer/);
    expectInvalid(() => compile(spec, { key: "count", op: "EQUALS", timestamp_value: "2020-01-01T00:00:00Z" }), /expected an integer/);
    expectInvalid(() => compile(spec, { key: "count", op: "IS_SUBSTRING", string_value: "1" }), /only applies to text fields/);
  });

  it("lets NULL of a nullable text column match where the empty string would", () => {
    const isNull = { kind: "isNull", column: "pipeline_id" };
    const cmp = (op: string, value: string) => ({ kind: "compare", column: "pipeline_id", op, value });
    expect(compile(jobList, { key: "package_id", op: "EQUALS", string_value: "" })).toEqual([{ kind: "or", conditions: [isNull, cmp("=", "")] }]);
    expect(compile(jobList, { key: "package_id", op: "EQUALS", string_value: "p" })).toEqual([cmp("=", "p")]);
    expect(compile(jobList, { key: "package_id", op: "NOT_EQUALS", string_value: "p" })).toEqual([{ kind: "or", conditions: [isNull, cmp("<>", "p")] }]);
    expect(compile(jobList, { key: "package_id", op: "GREATER_THAN", string_value: "" })).toEqual([cmp(">", "")]);
    expect(compile(jobList, { key: "package_id", op: "IS_SUBSTRING", string_value: "" })).toHaveProperty("0.kind", "or");
  });

  it("applies to pipelines (unlike KFP 0.1.23) and ANDs predicates, same key and op included", () => {
    expect(
      compile(pipelineList, { key: "name", op: "IS_SUBSTRING", string_value: "a" }, { key: "name", op: "IS_SUBSTRING", string_value: "b" }),
    ).toHaveLength(2);
  });

  it("rejects unknown keys, bad ops and op/value mismatches", () => {
    const cases: Array<[object, RegExp]> = [
      [{ key: "status", op: "EQUALS", string_value: "x" }, /^no support for filtering on unrecognized field "status"$/],
      [{ key: "scheduled_at", op: "EQUALS", int_value: 1 }, /unrecognized field "scheduled_at"/], // not a pipeline key
      [{ key: "name", op: "UNKNOWN", string_value: "x" }, /invalid predicate operation UNKNOWN/],
      [{ key: "name", op: 4, string_value: "x" }, /invalid predicate operation 4/],
      [{ key: "name", op: "EQUALS" }, /^no value set for predicate on key "name"$/],
      [{ key: "name", op: "IN", string_value: "x" }, /cannot use IN operator with scalar/],
      [{ key: "name", op: "EQUALS", string_values: { values: ["x"] } }, /cannot use EQUALS operator with array/],
      [{ key: "name", op: "IS_SUBSTRING", int_value: 1 }, /IS_SUBSTRING needs a string_value/],
      [{ key: "created_at", op: "IS_SUBSTRING", string_value: "16" }, /IS_SUBSTRING only applies to text fields/],
      [{ key: "name", op: "EQUALS", timestamp_value: "2020-01-01T00:00:00Z" }, /cannot compare text field "name" with a timestamp_value/],
      [{ key: "created_at", op: "EQUALS", string_value: "yesterday" }, /invalid value "yesterday" for "created_at"/],
      [{ key: "created_at", op: "EQUALS", string_value: "2020-02-30T00:00:00Z" }, /invalid value/],
    ];
    for (const [predicate, message] of cases) expectInvalid(() => compile(pipelineList, predicate), message);
    const runCases: Array<[object, RegExp]> = [
      [{ key: "storage_state", op: "EQUALS", string_value: "DELETED" }, /invalid value "DELETED" for "storage_state"/],
      [{ key: "storage_state", op: "EQUALS", int_value: 2 }, /invalid value "2"/],
      [{ key: "storage_state", op: "EQUALS", timestamp_value: "2020-01-01T00:00:00Z" }, /invalid value a timestamp_value/],
      [{ key: "storage_state", op: "IS_SUBSTRING", string_value: "ARCH" }, /IS_SUBSTRING only applies to text fields/],
    ];
    for (const [predicate, message] of runCases) expectInvalid(() => compile(runList, predicate), message);
  });

  it("limits the number of predicates and values", () => {
    const many = Array.from({ length: 101 }, () => ({ key: "name", op: "EQUALS", string_value: "x" }));
    expectInvalid(() => compile(runList, ...many), /at most 100 predicates/);
    const values = Array.from({ length: 1001 }, (_, i) => String(i));
    expectInvalid(() => compile(runList, { key: "name", op: "IN", string_values: { values } }), /at most 1000 values/);
  });
});

describe("parseRfc3339Millis", () => {
  it("parses offsets and fractions and rejects impossible dates", () => {
    expect(parseRfc3339Millis("2020-09-13T12:26:40Z")).toBe(T);
    expect(parseRfc3339Millis("2020-09-13t12:26:40.9z")).toBe(T + 900n);
    expect(parseRfc3339Millis("2020-09-13 13:26:40.000999+01:00")).toBe(T);
    expect(parseRfc3339Millis("0001-01-01T00:00:00Z")).toBe(-62135596800000n);
    expect(parseRfc3339Millis("2020-09-13T12:26:40")).toBeUndefined();
    expect(parseRfc3339Millis("2020-13-01T00:00:00Z")).toBeUndefined();
    expect(parseRfc3339Millis("2020-01-01T24:00:00Z")).toBeUndefined();
  });
});

describe("SQL", () => {
  it("escapes LIKE wildcards and binds every value", () => {
    expect(escapeLike("50%_\\x")).toBe("50\\%\\_\\\\x");
    const conditions = compile(runList, { key: "name", op: "IS_SUBSTRING", string_value: "a%'b" }, { key: "name", op: "IN", string_values: { values: [] } });
    expect(countQuery("sqlite", "run", conditions)).toEqual({
      text: `SELECT COUNT(*) AS "n" FROM "run" WHERE "name" LIKE ? ESCAPE '\\' AND 1 = 0`,
      params: ["%a\\%'b%"],
    });
    expect(countQuery("postgresql", "run", conditions).text).toBe(`SELECT COUNT(*) AS "n" FROM "run" WHERE "name" ILIKE $1 ESCAPE '\\' AND 1 = 0`);
  });
});
