// The filter parameter's encodings and the canonical filter text (no database).
import { describe, expect, it } from "vitest";
import { Predicate_Op } from "../../../gen/proto/kfp/filter_pb.js";
import { canonicalFilter, decodeFilterText, parseFilter } from "../../../src/store/listing/index.js";
import { urlDecodeLayer } from "../../../src/store/listing/filter-text.js";
import { expectInvalidArgument as expectInvalid } from "../../helpers/thrown.js";

const filter = {
  predicates: [{ key: "name", op: "IS_SUBSTRING", string_value: "50% a+b & c=d/é ?>~" }],
};
const json = JSON.stringify(filter);
const form = (text: string) => new URLSearchParams({ f: text }).toString().slice(2);


describe("decodeFilterText", () => {
  const encodings: Array<[string, string]> = [
    ["raw JSON", json],
    ["raw JSON with surrounding whitespace", `  ${json}\n`],
    ["encodeURIComponent once", encodeURIComponent(json)],
    ["encodeURIComponent twice (the KFP UI)", encodeURIComponent(encodeURIComponent(json))],
    ["form-encoded once ('+' for space)", form(json)],
    ["form-encoded twice", form(form(json))],
    ["base64", Buffer.from(json).toString("base64")],
    ["base64 without padding", Buffer.from(json).toString("base64").replace(/=+$/, "")],
    ["base64url", Buffer.from(json).toString("base64url")],
    ["base64 whose '+' became a space", Buffer.from(json).toString("base64").replace(/\+/g, " ")],
    ["base64, URL-encoded", encodeURIComponent(Buffer.from(json).toString("base64"))],
    ["base64url, URL-encoded twice", encodeURIComponent(encodeURIComponent(Buffer.from(json).toString("base64url")))],
  ];
  it.each(encodings)("reads %s", (_, text) => {
    expect(decodeFilterText(text)).toEqual(filter);
  });

  it("checks that the base64 cases really contain '+' or '/' and padding", () => {
    expect(Buffer.from(json).toString("base64")).toMatch(/[+/]/);
  });

  it("stops at the first layer that is JSON: escapes inside raw JSON values stay as they are", () => {
    const text = '{"predicates":[{"key":"name","op":"EQUALS","string_value":"%41+%"}]}';
    expect(decodeFilterText(text)).toEqual(JSON.parse(text));
    const once = encodeURIComponent(text);
    expect(decodeFilterText(once)).toEqual(JSON.parse(text));
    expect(decodeFilterText(encodeURIComponent(once))).toEqual(JSON.parse(text));
  });

  it("keeps a lone '%' while decoding the rest of a partly encoded text", () => {
    const text = '{"predicates":[{"key":"name",%20"op":"IS_SUBSTRING","string_value":"100%"}]}';
    expect(decodeFilterText(text)).toEqual({ predicates: [{ key: "name", op: "IS_SUBSTRING", string_value: "100%" }] });
  });

  it("rejects what is neither JSON, URL-encoded JSON nor base64 JSON", () => {
    expect(() => decodeFilterText("name=foo")).toThrow(/not JSON/);
    expect(() => decodeFilterText("abcd")).toThrow(/not JSON/); // base64 of bytes that are not JSON
    expect(() => decodeFilterText('{"predicates":')).toThrow(/JSON/);
    expect(() => decodeFilterText(encodeURIComponent('{"predicates":'))).toThrow(/JSON/);
    expect(() => decodeFilterText("%zz%")).toThrow(/not JSON/);
  });
});

describe("urlDecodeLayer", () => {
  it("decodes %XX runs as UTF-8, '+' as space, and leaves invalid escapes", () => {
    expect(urlDecodeLayer("a+b%20c%C3%A9%")).toBe("a b cé%");
    expect(urlDecodeLayer("%zz%4")).toBe("%zz%4");
    expect(urlDecodeLayer("%FF")).toBe("\uFFFD");
  });
});

describe("parseFilter", () => {
  it("treats an empty or blank filter, and one without predicates, as no filter", () => {
    for (const text of ["", "   ", "{}", '{"predicates":[]}']) {
      const parsed = parseFilter(text);
      expect(parsed.filter.predicates).toEqual([]);
      expect(parsed.canonical).toBe("");
    }
  });

  it("accepts snake_case and camelCase, enum names (any case) and numbers, and ignores unknown fields", () => {
    const a = parseFilter('{"predicates":[{"key":"name","op":"EQUALS","string_value":"x","extra":1}],"other":true}');
    const b = parseFilter('{"predicates":[{"key":"name","op":1,"stringValue":"x"}]}');
    const c = parseFilter('{"predicates":[{"key":"name","op":"equals","stringValue":"x"}]}');
    expect(a.filter.predicates[0]!.op).toBe(Predicate_Op.EQUALS);
    expect(a.filter.predicates[0]!.value).toEqual({ case: "stringValue", value: "x" });
    expect(b.canonical).toBe(a.canonical);
    expect(c.canonical).toBe(a.canonical);
  });

  it("reads every value kind", () => {
    const parsed = parseFilter(
      JSON.stringify({
        predicates: [
          { key: "a", op: "EQUALS", int_value: 5 },
          { key: "b", op: "EQUALS", long_value: "9007199254740993" },
          { key: "c", op: "EQUALS", timestamp_value: "2020-09-13T12:26:40.5Z" },
          { key: "d", op: "IN", int_values: { values: [1, 2] } },
          { key: "e", op: "IN", long_values: { values: ["3", 4] } },
          { key: "f", op: "IN", string_values: { values: ["x"] } },
        ],
      }),
    );
    expect(parsed.filter.predicates.map((p) => p.value.case)).toEqual([
      "intValue",
      "longValue",
      "timestampValue",
      "intValues",
      "longValues",
      "stringValues",
    ]);
    expect(parsed.filter.predicates[1]!.value.value).toBe(9007199254740993n);
  });

  it("gives the same canonical text for reordered predicates and equivalent spellings", () => {
    const p1 = { key: "name", op: "EQUALS", string_value: "x" };
    const p2 = { key: "created_at", op: "GREATER_THAN", long_value: 5 };
    const a = parseFilter(JSON.stringify({ predicates: [p1, p2] }));
    const b = parseFilter(encodeURIComponent(JSON.stringify({ predicates: [{ ...p2, long_value: "5" }, p1] })));
    expect(b.canonical).toBe(a.canonical);
    expect(a.canonical).toBe(canonicalFilter(a.filter));
    expect(JSON.parse(a.canonical)).toEqual({
      predicates: [
        { op: "EQUALS", key: "name", stringValue: "x" },
        { op: "GREATER_THAN", key: "created_at", longValue: "5" },
      ].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
    });
  });

  it("answers InvalidArgument quoting the raw filter", () => {
    expectInvalid(() => parseFilter("nonsense"), /^invalid filter "nonsense": /);
    expectInvalid(() => parseFilter('{"predicates":[{"key":"name","op":"SIMILAR"}]}'), /^invalid filter .*unknown predicate operation "SIMILAR"/);
    expectInvalid(() => parseFilter('{"predicates":{"key":"name"}}'), /^invalid filter /);
    expectInvalid(() => parseFilter('{"predicates":[{"key":"name","op":"EQUALS","int_value":"abc"}]}'), /^invalid filter /);
    expectInvalid(() => parseFilter("[1,2]"), /^invalid filter "\[1,2\]": the filter must be a JSON object/);
  });
});
