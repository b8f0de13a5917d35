import { describe, expect, it } from "vitest";
import { referencedVariables, scopeLookup, substitute, substituteDeep, UnresolvedVariableError, type VariableLookup } from "../../src/engine/local/template-vars.js";
import { WorkflowError } from "../../src/engine/local/workflow-error.js";
import { thrownBy as thrown } from "../helpers/thrown.js";

const vars: Record<string, string> = {
  "workflow.name": "coin-abc12",
  "workflow.uid": "5f1c",
  "workflow.parameters.tag": "latest",
  "inputs.parameters.flip-output": "heads",
  "inputs.parameters.my_pipe_param": "10",
  "inputs.artifacts.data.path": "/tmp/inputs/data",
  "tasks.flip.outputs.parameters.flip-output": "tails",
  "tasks.flip.outputs.result": "tails",
  "tasks.flip.id": "coin-abc12-123",
  "steps.s.outputs.parameters.p": "P",
  "pod.name": "coin-abc12-123",
  item: "hello world",
  "item.a": "1",
  empty: "",
  dollars: "$& $1 $$ $'",
  braces: "{{item}}",
};
const lookup: VariableLookup = (name) => vars[name];


describe("substitute", () => {
  it.each([
    ["no tokens", "plain text", "plain text"],
    ["empty text", "", ""],
    ["a whole-string token", "{{workflow.name}}", "coin-abc12"],
    ["whitespace inside the braces", "{{ inputs.parameters.flip-output }}", "heads"],
    ["tabs and newlines inside the braces", "{{\tinputs.parameters.flip-output\n}}", "heads"],
    ["tokens in running text", "echo op1 {{item.a}} {{inputs.parameters.my_pipe_param}}", "echo op1 1 10"],
    ["adjacent tokens", "{{item.a}}{{item.a}}", "11"],
    ["the same token twice", "{{pod.name}}/{{pod.name}}", "coin-abc12-123/coin-abc12-123"],
    ["KFP-style names with dashes and underscores", "{{tasks.flip.outputs.parameters.flip-output}}", "tails"],
    ["workflow parameters", "busybox:{{workflow.parameters.tag}}", "busybox:latest"],
    ["artifact paths", "cat {{inputs.artifacts.data.path}}", "cat /tmp/inputs/data"],
    ["steps outputs", "{{steps.s.outputs.parameters.p}}", "P"],
    ["task results and ids", "{{tasks.flip.outputs.result}}@{{tasks.flip.id}}", "tails@coin-abc12-123"],
    ["an empty value is a value", "[{{empty}}]", "[]"],
    ["replacement patterns in values are literal", "{{dollars}}", "$& $1 $$ $'"],
    ["values are not substituted again", "{{braces}}", "{{item}}"],
    ["a quoted when condition", '"{{tasks.flip.outputs.parameters.flip-output}}" == "heads"', '"tails" == "heads"'],
    ["multi-line text", "line1 {{item}}\nline2 {{item.a}}", "line1 hello world\nline2 1"],
    ["an opener without a closer is text", "{{item", "{{item"],
    ["a lone closer is text", "item}}", "item}}"],
    ["single braces are text", "{item} {a: 1}", "{item} {a: 1}"],
    ["nested openers: the innermost token", "{{x{{item.a}}", "{{x1"],
    ["a closer right after a token", "{{item.a}}}", "1}"],
    ["a JSON manifest around a token", '{"name": "{{workflow.name}}-data"}', '{"name": "coin-abc12-data"}'],
  ])("%s", (_name, text, expected) => {
    expect(substitute(text, lookup)).toBe(expected);
  });

  it("calls the lookup with the trimmed name", () => {
    const names: string[] = [];
    substitute("{{  a.b  }} {{c}}", (name) => {
      names.push(name);
      return "x";
    });
    expect(names).toEqual(["a.b", "c"]);
  });

  it.each([
    ["one unknown name", "echo {{inputs.parameters.nope}}", ["inputs.parameters.nope"], "unresolved variable {{inputs.parameters.nope}}"],
    ["several, in order, each once", "{{b}} {{item}} {{a}} {{ b }}", ["b", "a"], "unresolved variables {{b}}, {{a}}"],
    ["an empty token", "x {{}} y", [""], "unresolved variable {{}}"],
    ["a whitespace-only token", "x {{   }} y", [""], "unresolved variable {{}}"],
    ["triple braces", "{{{item}}}", ["{item"], "unresolved variable {{{item}}"],
  ])("throws for %s by default", (_name, text, names, message) => {
    const err = thrown(() => substitute(text, lookup));
    expect(err).toBeInstanceOf(UnresolvedVariableError);
    expect(err).toBeInstanceOf(WorkflowError);
    expect(err.name).toBe("UnresolvedVariableError");
    expect(err.message).toBe(message);
    expect((err as UnresolvedVariableError).variables).toEqual(names);
    expect(() => substitute(text, lookup, { onMissing: "error" })).toThrow(message);
  });

  it.each([
    ["unknown tokens stay as written", "a {{ nope }} {{item.a}} {{nope2}}", "a {{ nope }} 1 {{nope2}}"],
    ["known ones are still replaced", "{{item}}", "hello world"],
    ["an artifact reference", "{{tasks.flip.outputs.artifacts.flip-output}}", "{{tasks.flip.outputs.artifacts.flip-output}}"],
  ])("keeps unknown names with onMissing keep: %s", (_name, text, expected) => {
    expect(substitute(text, lookup, { onMissing: "keep" })).toBe(expected);
  });

  it("treats a lookup that returns null as unknown", () => {
    const nullLookup = (() => null) as unknown as VariableLookup;
    expect(substitute("{{a}}", nullLookup, { onMissing: "keep" })).toBe("{{a}}");
  });

  it("rejects an unknown onMissing policy", () => {
    expect(() => substitute("x", lookup, { onMissing: "ignore" as "keep" })).toThrow(TypeError);
  });
});

describe("substituteDeep", () => {
  it("substitutes strings in nested objects and arrays, not keys, and copies", () => {
    const container = {
      image: "busybox:{{workflow.parameters.tag}}",
      command: ["sh", "-c"],
      args: ["echo {{item}}", "{{item.a}}"],
      env: [{ name: "{{item.a}}", value: "{{inputs.parameters.flip-output}}" }],
      "{{item.a}}": "key stays",
      nested: { deeper: [["{{pod.name}}"]] },
      port: 8080,
      enabled: true,
      nothing: null,
      missing: undefined,
    };
    const before = structuredClone(container);
    const result = substituteDeep(container, lookup);
    expect(result).toEqual({
      image: "busybox:latest",
      command: ["sh", "-c"],
      args: ["echo hello world", "1"],
      env: [{ name: "1", value: "heads" }],
      "{{item.a}}": "key stays",
      nested: { deeper: [["coin-abc12-123"]] },
      port: 8080,
      enabled: true,
      nothing: null,
      missing: undefined,
    });
    expect(container).toEqual(before);
    expect(result).not.toBe(container);
    expect(result.args).not.toBe(container.args);
    expect(result.env[0]).not.toBe(container.env[0]);
    expect(result.nested.deeper[0]).not.toBe(container.nested.deeper[0]);
  });

  it.each([
    ["a string", "{{item.a}}", "1"],
    ["a number", 5, 5],
    ["a boolean", false, false],
    ["null", null, null],
    ["undefined", undefined, undefined],
    ["an array of strings", ["{{item.a}}", "x"], ["1", "x"]],
  ])("handles %s at the top level", (_name, value, expected) => {
    expect(substituteDeep(value, lookup)).toEqual(expected);
  });

  it("lists every unresolved name found anywhere", () => {
    const err = thrown(() => substituteDeep({ a: "{{x}}", b: ["{{y}}", { c: "{{x}} {{z}}" }] }, lookup));
    expect(err).toBeInstanceOf(UnresolvedVariableError);
    expect((err as UnresolvedVariableError).variables).toEqual(["x", "y", "z"]);
    expect(err.message).toBe("unresolved variables {{x}}, {{y}}, {{z}}");
  });

  it("keeps unknown tokens with onMissing keep", () => {
    expect(substituteDeep({ a: ["{{x}}", "{{item.a}}"] }, lookup, { onMissing: "keep" })).toEqual({ a: ["{{x}}", "1"] });
  });

  it("shares objects that are not plain", () => {
    const when = new Date(0);
    const result = substituteDeep({ when, list: ["{{item.a}}"] }, lookup);
    expect(result.when).toBe(when);
  });

  it("keeps shared sub-objects shared, and copes with cycles", () => {
    const shared = { v: "{{item.a}}" };
    const tree: Record<string, unknown> = { a: shared, b: shared };
    tree.self = tree;
    const result = substituteDeep(tree, lookup) as { a: { v: string }; b: unknown; self: unknown };
    expect(result.a).toEqual({ v: "1" });
    expect(result.b).toBe(result.a);
    expect(result.self).toBe(result);
  });

  it("copies a __proto__ key as an ordinary key, and null-prototype objects", () => {
    const parsed = JSON.parse('{"__proto__": "{{item.a}}", "x": "{{item.a}}"}') as Record<string, unknown>;
    const result = substituteDeep(parsed, lookup);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toEqual(["__proto__", "x"]);
    expect(result["__proto__"]).toBe("1");
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { y: "{{item.a}}" });
    const copied = substituteDeep(bare, lookup);
    expect(Object.getPrototypeOf(copied)).toBeNull();
    expect(copied.y).toBe("1");
  });
});

describe("scopeLookup", () => {
  const task = { item: "task-item", "inputs.parameters.x": "from-task" };
  const template = { "inputs.parameters.x": "from-template", "inputs.parameters.y": "y" };
  const workflow = { "workflow.name": "wf", "inputs.parameters.y": "shadowed" };

  it.each([
    ["the first scope that has the name wins", "inputs.parameters.x", "from-task"],
    ["later scopes are consulted", "inputs.parameters.y", "y"],
    ["the last scope", "workflow.name", "wf"],
    ["unknown names", "nope", undefined],
    ["inherited properties are not variables", "constructor", undefined],
    ["toString is not a variable", "toString", undefined],
    ["__proto__ is not a variable", "__proto__", undefined],
  ])("%s", (_name, name, expected) => {
    expect(scopeLookup(task, template, workflow)(name)).toBe(expected);
  });

  it("skips a scope whose value is undefined", () => {
    const hole = { a: undefined } as unknown as Record<string, string>;
    expect(scopeLookup(hole, { a: "A" })("a")).toBe("A");
  });

  it("reads the scopes when looked up, not when created", () => {
    const scope: Record<string, string> = {};
    const look = scopeLookup(scope);
    expect(look("late")).toBeUndefined();
    scope.late = "now";
    expect(look("late")).toBe("now");
  });

  it("knows nothing without scopes", () => {
    expect(scopeLookup()("x")).toBeUndefined();
  });

  it("works with substitute", () => {
    expect(substitute("{{item}} {{workflow.name}}", scopeLookup(task, workflow))).toBe("task-item wf");
  });
});

describe("referencedVariables", () => {
  it.each([
    ["no tokens", "plain", []],
    ["one", "{{inputs.parameters.x}}", ["inputs.parameters.x"]],
    ["trimmed, each once, in order", "{{ b }} {{a}} {{b}} {{item.a}}", ["b", "a", "item.a"]],
    ["a when condition", '"{{tasks.flip.outputs.parameters.flip-output}}" == "heads"', ["tasks.flip.outputs.parameters.flip-output"]],
    ["nested openers", "{{x{{y}}", ["y"]],
    ["unclosed", "{{y", []],
    ["an empty token", "{{}}", [""]],
  ])("%s", (_name, text, expected) => {
    expect(referencedVariables(text)).toEqual(expected);
  });
});
