import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  itemLabel,
  itemsFromWithItems,
  itemsFromWithParam,
  itemsFromWithSequence,
  itemVariables,
  JsonNumber,
  MAX_SEQUENCE_LENGTH,
  type LoopItem,
  type SequenceSpec,
} from "../../src/engine/local/loop-items.js";
import { WorkflowError } from "../../src/engine/local/workflow-error.js";
import { thrownBy as thrown } from "../helpers/thrown.js";

const workflowsDir = new URL("../../../shared/testdata/workflows/", import.meta.url).pathname;


const values = (items: LoopItem[]) => items.map((item) => item.value);

describe("itemsFromWithItems", () => {
  it("keeps the values in order, with their indexes", () => {
    const map = { a: 1, b: 2 };
    expect(itemsFromWithItems(["hello world", 5, true, null, map, [1, 2]])).toEqual([
      { value: "hello world", index: 0 },
      { value: 5, index: 1 },
      { value: true, index: 2 },
      { value: null, index: 3 },
      { value: { a: 1, b: 2 }, index: 4 },
      { value: [1, 2], index: 5 },
    ]);
    expect(itemsFromWithItems([map])[0].value).toBe(map);
    expect(itemsFromWithItems([])).toEqual([]);
  });

  it.each([
    ["undefined", [undefined], "withItems[0]: expected a string, number, boolean, list or map, got nothing"],
    ["a function", ["a", () => 1], "withItems[1]: expected a string, number, boolean, list or map, got function"],
    ["a Date", [new Date(0)], "withItems[0]: expected a string, number, boolean, list or map, got Date"],
    ["a Map", [new Map()], "withItems[0]: expected a string, number, boolean, list or map, got Map"],
    ["NaN", [NaN], "withItems[0]: NaN is not a finite number"],
    ["Infinity inside a map", [{ a: { b: Infinity } }], "withItems[0].a.b: Infinity is not a finite number"],
    ["a symbol inside a list", [[1, Symbol("s")]], "withItems[0][1]: expected a string, number, boolean, list or map, got symbol"],
    ["not a list", "abc" as unknown as unknown[], "withItems must be a list, got string"],
  ])("rejects %s", (_name, items, message) => {
    const err = thrown(() => itemsFromWithItems(items));
    expect(err).toBeInstanceOf(WorkflowError);
    expect(err.message).toBe(message);
  });

  it("accepts bigints and null-prototype maps", () => {
    const bare = Object.assign(Object.create(null) as object, { k: "v" });
    expect(values(itemsFromWithItems([10n, bare]))).toEqual([10n, bare]);
  });
});

describe("itemsFromWithParam", () => {
  it.each([
    ["numbers, as Python's json.dump writes them", "[20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]", [20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]],
    ["strings", '["a", "b c", ""]', ["a", "b c", ""]],
    ["maps", '[{"a": 1, "b": "x"}, {"a": 2, "b": "y"}]', [{ a: 1, b: "x" }, { a: 2, b: "y" }]],
    ["nested values", '[{"a": [1, {"b": null}]}, [[]], {}]', [{ a: [1, { b: null }] }, [[]], {}]],
    ["booleans and null", "[true, false, null]", [true, false, null]],
    ["an empty list", "[]", []],
    ["surrounding whitespace and newlines", "\n  [1,2]\n", [1, 2]],
    ["escapes in strings", '["a\\"b", "\\u00e9\\n", "\\ud83d\\ude00", "\\/"]', ['a"b', "é\n", "😀", "/"]],
    ["negative and fractional numbers", "[-1, 0.5, -0.25, 0]", [-1, 0.5, -0.25, 0]],
    ["duplicate keys: the last wins", '[{"a": 1, "a": 2}]', [{ a: 2 }]],
  ])("reads %s", (_name, json, expected) => {
    expect(values(itemsFromWithParam(json))).toEqual(expected);
    expect(itemsFromWithParam(json).map((item) => item.index)).toEqual(expected.map((_v, i) => i));
  });

  it.each([
    ["1.0", "1.0"],
    ["1e3", "1e3"],
    ["1E+2", "1E+2"],
    ["-0", "-0"],
    ["12345678901234567890", "12345678901234567890"],
    ["0.10", "0.10"],
  ])("keeps the text of %s", (literal, text) => {
    const [item] = itemsFromWithParam(`[${literal}]`);
    expect(item.value).toBeInstanceOf(JsonNumber);
    expect((item.value as JsonNumber).text).toBe(text);
    expect(Number(item.value)).toBe(Number(text));
    expect(itemVariables(item).item).toBe(text);
    expect(itemLabel(item)).toBe(`(0:${text})`);
  });

  it("keeps the text of numbers inside maps and lists", () => {
    const [map, list] = itemsFromWithParam('[{"x": 1.50, "y": 2}, [1.0, 2]]');
    expect(itemVariables(map)).toEqual({ item: '{"x":1.50,"y":2}', "item.x": "1.50", "item.y": "2" });
    expect(itemVariables(list)).toEqual({ item: "[1.0,2]" });
    expect(JSON.stringify(map.value)).toBe('{"x":1.5,"y":2}');
  });

  it("reads a __proto__ key as an ordinary key", () => {
    const [item] = itemsFromWithParam('[{"__proto__": "x", "a": "b"}]');
    expect(Object.getPrototypeOf(item.value)).toBe(Object.prototype);
    expect(itemVariables(item)).toEqual({ item: '{"__proto__":"x","a":"b"}', "item.__proto__": "x", "item.a": "b" });
  });

  it.each([
    ["an object", '{"a": 1}', "withParam value is not a JSON list: {\"a\": 1}"],
    ["a number", "5", "withParam value is not a JSON list: 5"],
    ["a string", '"[1]"', 'withParam value is not a JSON list: "[1]"'],
    ["null", "null", "withParam value is not a JSON list: null"],
    ["empty text", "", "withParam value is not a JSON list: (empty) (unexpected end of input at position 0)"],
    ["plain words", "heads", "withParam value is not a JSON list: heads (unexpected \"h\" at position 0)"],
    ["an unresolved variable", "{{tasks.a.outputs.parameters.b}}", "withParam value is not a JSON list: {{tasks.a.outputs.parameters.b}} (expected a string key at position 1)"],
    ["a trailing comma", "[1, 2,]", "withParam value is not a JSON list: [1, 2,] (unexpected \"]\" at position 6)"],
    ["single quotes", "['a']", "withParam value is not a JSON list: ['a'] (unexpected \"'\" at position 1)"],
    ["NaN", "[NaN]", "withParam value is not a JSON list: [NaN] (unexpected \"N\" at position 1)"],
    ["a leading zero", "[01]", "withParam value is not a JSON list: [01] (expected ',' or ']' at position 2)"],
    ["an unclosed list", "[1, 2", "withParam value is not a JSON list: [1, 2 (expected ',' or ']' at position 5)"],
    ["an unterminated string", '["abc]', 'withParam value is not a JSON list: ["abc] (unterminated string at position 1)'],
    ["a raw newline in a string", '["a\nb"]', 'withParam value is not a JSON list: ["a\nb"] (control character in string at position 3)'],
    ["a bad escape", '["\\x"]', 'withParam value is not a JSON list: ["\\x"] (invalid escape in string at position 2)'],
    ["trailing text", "[1] [2]", "withParam value is not a JSON list: [1] [2] (unexpected \"[\" after the JSON value at position 4)"],
    ["a comment", "[1] // one", "withParam value is not a JSON list: [1] // one (unexpected \"/\" after the JSON value at position 4)"],
  ])("rejects %s", (_name, json, message) => {
    const err = thrown(() => itemsFromWithParam(json));
    expect(err).toBeInstanceOf(WorkflowError);
    expect(err.message).toBe(message);
  });

  it("shortens a long value in its message", () => {
    const err = thrown(() => itemsFromWithParam(`{"a": "${"x".repeat(500)}"}`));
    expect(err.message).toBe(`withParam value is not a JSON list: {"a": "${"x".repeat(193)}…`);
  });

  it("refuses absurd nesting instead of overflowing the stack", () => {
    expect(() => itemsFromWithParam("[".repeat(10_000) + "]".repeat(10_000))).toThrow(/nesting too deep/);
  });
});

describe("itemsFromWithSequence", () => {
  it.each<[string, SequenceSpec, string[]]>([
    ["count", { count: 3 }, ["0", "1", "2"]],
    ["count as a string", { count: "3" }, ["0", "1", "2"]],
    ["start and count", { start: 5, count: 3 }, ["5", "6", "7"]],
    ["a negative start", { start: "-2", count: "3" }, ["-2", "-1", "0"]],
    ["start and end", { start: "2", end: "5" }, ["2", "3", "4", "5"]],
    ["end only: start defaults to 0", { end: 2 }, ["0", "1", "2"]],
    ["end below start counts down", { start: 5, end: 2 }, ["5", "4", "3", "2"]],
    ["a one-item range", { start: 7, end: 7 }, ["7"]],
    ["count 0", { count: 0 }, []],
    ["count '0'", { count: "0", start: 5 }, []],
    ["empty strings are absent", { start: "", count: "2", end: "" }, ["0", "1"]],
    ["null fields are absent", { start: null, end: 1 } as unknown as SequenceSpec, ["0", "1"]],
    ["whitespace around numbers, and a plus sign", { start: " +1 ", count: "2\n" }, ["1", "2"]],
    ["an empty format is %d", { count: 2, format: "" }, ["0", "1"]],
  ])("%s", (_name, sequence, expected) => {
    expect(values(itemsFromWithSequence(sequence))).toEqual(expected);
  });

  it.each<[string, number[], string[]]>([
    ["%d", [0, 7, -7], ["0", "7", "-7"]],
    ["%v", [42], ["42"]],
    ["%02d", [0, 5, 10, 100, -5], ["00", "05", "10", "100", "-5"]],
    ["%03d", [-5], ["-05"]],
    ["item-%d", [1], ["item-1"]],
    ["%d-of-many", [1], ["1-of-many"]],
    ["100%% %d", [3], ["100% 3"]],
    ["%5d|", [42, -42], ["   42|", "  -42|"]],
    ["%-5d|", [42], ["42   |"]],
    ["%-05d|", [42], ["42   |"]],
    ["%+d", [5, -5, 0], ["+5", "-5", "+0"]],
    ["% d", [5, -5], [" 5", "-5"]],
    ["%+05d", [5], ["+0005"]],
    ["%.3d", [7, -7], ["007", "-007"]],
    ["%6.3d|", [7], ["   007|"]],
    ["%06.3d|", [7], ["   007|"]],
    ["%.0d|", [0, 3], ["|", "3|"]],
    ["%3.0d|", [0], ["   |"]],
    ["%.d", [0], [""]],
    ["%x", [255, -255], ["ff", "-ff"]],
    ["%X", [255], ["FF"]],
    ["%#x", [255, 0], ["0xff", "0x0"]],
    ["%#X", [255], ["0XFF"]],
    ["%04x", [10], ["000a"]],
    ["%#06x", [255], ["0x0000ff"]],
    ["%o", [8], ["10"]],
    ["%#o", [8, 0], ["010", "0"]],
    ["%O", [8], ["0o10"]],
    ["%b", [5], ["101"]],
    ["%#b", [5], ["0b101"]],
    ["%08b", [5], ["00000101"]],
    ["%#v", [5], ["5"]],
    ["%#d", [5], ["5"]],
  ])("format %s", (format, numbers, expected) => {
    const got = numbers.map((n) => itemsFromWithSequence({ start: n, count: 1, format })[0].value);
    expect(got).toEqual(expected);
  });

  it.each<[string, SequenceSpec, string]>([
    ["both count and end", { count: 2, end: 5 }, "only one of count or end can be defined in withSequence"],
    ["neither count nor end", { start: 1 }, "neither end nor count was specified in withSequence"],
    ["nothing at all", {}, "neither end nor count was specified in withSequence"],
    ["a fractional count", { count: "1.5" }, 'withSequence count must be an integer, got "1.5"'],
    ["a fractional number", { count: 1.5 }, "withSequence count must be an integer, got 1.5"],
    ["a word", { end: "ten" }, 'withSequence end must be an integer, got "ten"'],
    ["an unresolved variable", { count: "{{inputs.parameters.n}}" }, 'withSequence count must be an integer, got "{{inputs.parameters.n}}"'],
    ["a huge number", { start: "99999999999999999999", count: 1 }, 'withSequence start must be an integer, got "99999999999999999999"'],
    ["a boolean", { count: true } as unknown as SequenceSpec, "withSequence count must be an integer, got boolean"],
    ["a negative count", { count: -2 }, "withSequence count must not be negative, got -2"],
    ["too many items", { count: MAX_SEQUENCE_LENGTH + 1 }, `withSequence would expand into ${MAX_SEQUENCE_LENGTH + 1} items, more than the limit of ${MAX_SEQUENCE_LENGTH}`],
    ["too many items counting down", { start: 0, end: -MAX_SEQUENCE_LENGTH }, "more than the limit"],
    ["%s", { count: 1, format: "%s" }, 'withSequence format "%s": %s is not an integer verb (use one of %d %v %b %o %O %x %X)'],
    ["%f", { count: 1, format: "%5.2f" }, "%f is not an integer verb"],
    ["%c", { count: 1, format: "%c" }, "%c is not an integer verb"],
    ["a width from an argument", { count: 1, format: "%*d" }, "%* is not an integer verb"],
    ["two directives", { count: 1, format: "%d-%d" }, 'withSequence format "%d-%d" has more than one directive; it formats a single number'],
    ["no directive", { count: 1, format: "item" }, 'withSequence format "item" has no directive such as %d for the number'],
    ["only a percent sign", { count: 1, format: "100%%" }, "has no directive"],
    ["a trailing %", { count: 1, format: "%d%" }, 'withSequence format "%d%" ends in an incomplete directive'],
    ["a format that is not a string", { count: 1, format: 5 } as unknown as SequenceSpec, "withSequence format must be a string, got number"],
    ["not a map", "5" as unknown as SequenceSpec, "withSequence must be a map, got string"],
  ])("rejects %s", (_name, sequence, message) => {
    const err = thrown(() => itemsFromWithSequence(sequence));
    expect(err).toBeInstanceOf(WorkflowError);
    expect(err.message).toContain(message);
  });

  it("expands up to the limit", () => {
    const items = itemsFromWithSequence({ count: MAX_SEQUENCE_LENGTH });
    expect(items).toHaveLength(MAX_SEQUENCE_LENGTH);
    expect(items.at(-1)).toEqual({ value: String(MAX_SEQUENCE_LENGTH - 1), index: MAX_SEQUENCE_LENGTH - 1 });
  });
});

describe("itemVariables and itemLabel", () => {
  it.each<[string, unknown, Record<string, string>, string]>([
    ["a string", "hello world", { item: "hello world" }, "(0:hello world)"],
    ["an empty string", "", { item: "" }, "(0:)"],
    ["a string with symbols", 'a "b" {c}', { item: 'a "b" {c}' }, '(0:a "b" {c})'],
    ["an integer", 5, { item: "5" }, "(0:5)"],
    ["a negative float", -2.5, { item: "-2.5" }, "(0:-2.5)"],
    ["a YAML float that is whole", 1.0, { item: "1" }, "(0:1)"],
    ["a large number", 1e21, { item: "1e+21" }, "(0:1e+21)"],
    ["a bigint", 12345678901234567890n, { item: "12345678901234567890" }, "(0:12345678901234567890)"],
    ["true", true, { item: "true" }, "(0:true)"],
    ["false", false, { item: "false" }, "(0:false)"],
    ["null", null, { item: "" }, "(0:)"],
    ["a list", [1, "x", true, null, { b: 1, a: 2 }], { item: '[1,"x",true,null,{"a":2,"b":1}]' }, '(0:[1 x true  {"a":2,"b":1}])'],
    ["an empty list", [], { item: "[]" }, "(0:[])"],
    ["an empty map", {}, { item: "{}" }, "(0:)"],
    [
      "a map (withitem_basic.yaml)",
      { a: 1, b: 2 },
      { item: '{"a":1,"b":2}', "item.a": "1", "item.b": "2" },
      "(0:a:1,b:2)",
    ],
    [
      "a map with keys out of order",
      { name: "jesse", group: "developer" },
      { item: '{"group":"developer","name":"jesse"}', "item.name": "jesse", "item.group": "developer" },
      "(0:group:developer,name:jesse)",
    ],
    [
      "a map with nested values",
      { s: "text", n: 1.5, t: true, z: null, l: [1, "a"], m: { y: 1, x: "2" } },
      { item: '{"l":[1,"a"],"m":{"x":"2","y":1},"n":1.5,"s":"text","t":true,"z":null}', "item.s": "text", "item.n": "1.5", "item.t": "true", "item.z": "", "item.l": '[1,"a"]', "item.m": '{"x":"2","y":1}' },
      '(0:l:[1,"a"],m:{"x":"2","y":1},n:1.5,s:text,t:true,z:)',
    ],
    [
      // Argo sorts the "key:value" strings, not the keys: "a-b:…" comes before "a:…".
      "a map whose label order differs from its key order",
      { a: 1, "a-b": 2 },
      { item: '{"a":1,"a-b":2}', "item.a": "1", "item.a-b": "2" },
      "(0:a-b:2,a:1)",
    ],
    ["a map with an undefined value", { a: 1, gone: undefined }, { item: '{"a":1}', "item.a": "1" }, "(0:a:1)"],
  ])("%s", (_name, value, variables, label) => {
    const item = { value, index: 0 };
    expect(itemVariables(item)).toEqual(variables);
    expect(itemLabel(item)).toBe(label);
  });

  it("puts the index in the label", () => {
    expect(itemsFromWithItems(["a", "b", "c"]).map(itemLabel)).toEqual(["(0:a)", "(1:b)", "(2:c)"]);
    expect(itemsFromWithSequence({ start: 1, count: 2, format: "%02d" }).map(itemLabel)).toEqual(["(0:01)", "(1:02)"]);
  });

  it("rejects values a loop item cannot hold", () => {
    expect(() => itemVariables({ value: { d: new Date(0) }, index: 0 })).toThrow(WorkflowError);
    expect(() => itemVariables({ value: [NaN], index: 0 })).toThrow("NaN is not a finite number");
  });
});

// The loops of the sample workflows, expanded as the engine will.
describe("the loops of shared/testdata/workflows", () => {
  type Task = { name: string; withItems?: unknown[]; withParam?: string; arguments?: { parameters?: { name: string; value: string }[] } };
  type Workflow = { spec: { templates: { name: string; dag?: { tasks: Task[] }; steps?: Task[][] }[] } };
  const tasksOf = (file: string): Task[] => {
    const workflow = parse(readFileSync(workflowsDir + file, "utf8")) as Workflow;
    return workflow.spec.templates.flatMap((t) => [...(t.dag?.tasks ?? []), ...(t.steps ?? []).flat()]);
  };

  it("loops.yaml: withItems of strings", () => {
    const task = tasksOf("loops.yaml").find((t) => t.withItems)!;
    const items = itemsFromWithItems(task.withItems!);
    expect(items.map((item) => task.name + itemLabel(item))).toEqual(["print-message(0:hello world)", "print-message(1:goodbye world)"]);
    expect(items.map(itemVariables)).toEqual([{ item: "hello world" }, { item: "goodbye world" }]);
  });

  it("withitem_basic.yaml: withItems of maps", () => {
    const task = tasksOf("withitem_basic.yaml").find((t) => t.withItems)!;
    const items = itemsFromWithItems(task.withItems!);
    expect(items.map((item) => task.name + itemLabel(item))).toEqual(["for-loop-2(0:a:1,b:2)", "for-loop-2(1:a:10,b:20)"]);
    expect(items.map(itemVariables)).toEqual([
      { item: '{"a":1,"b":2}', "item.a": "1", "item.b": "2" },
      { item: '{"a":10,"b":20}', "item.a": "10", "item.b": "20" },
    ]);
  });

  it("withparam_output.yaml: withParam from a step's JSON output", () => {
    const task = tasksOf("withparam_output.yaml").find((t) => t.withParam)!;
    expect(task.withParam).toBe("{{tasks.my-out-cop0.outputs.parameters.my-out-cop0-out}}");
    // What `json.dump([i for i in range(20, 31)], ...)` writes.
    const output = JSON.stringify(Array.from({ length: 11 }, (_v, i) => 20 + i)).replaceAll(",", ", ");
    const items = itemsFromWithParam(output);
    expect(items.map((item) => task.name + itemLabel(item))).toEqual(Array.from({ length: 11 }, (_v, i) => `for-loop-1(${i}:${20 + i})`));
    expect(items.map((item) => itemVariables(item).item)).toEqual(Array.from({ length: 11 }, (_v, i) => String(20 + i)));
  });
});
