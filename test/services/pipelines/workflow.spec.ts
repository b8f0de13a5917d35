import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import {
  parseWorkflow,
  withParameterValues,
  workflowParameters,
  type Workflow,
} from "../../../src/services/pipelines/workflow.js";
import { workflowsDir } from "./archives.js";
import { thrownConnectError as thrown } from "../../helpers/thrown.js";

const header = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n";


function expectInvalid(fn: () => unknown, message: string | RegExp) {
  const err = thrown(fn);
  expect(err.code).toBe(Code.InvalidArgument);
  expect(err.rawMessage).toMatch(message);
}

const withArguments = (parameters: string) => `${header}spec:\n  arguments:\n    parameters:\n${parameters}`;

// shared/testdata/workflows: compiled KFP samples. Each must parse, with these parameters.
const workflowFixtures: Record<string, { name: string; value?: string }[]> = {
  "arguments-parameters.yaml": [{ name: "param1", value: "hello" }, { name: "param2" }],
  "basic.yaml": [{ name: "message" }, { name: "outputpath" }],
  "coin.yaml": [],
  "compose.yaml": [{ name: "url" }, { name: "outputpath" }],
  "default_value.yaml": [{ name: "url", value: "gs://ml-pipeline/shakespeare1.txt" }],
  "hello-world.yaml": [],
  "long-running.yaml": [],
  "loops.yaml": [],
  "param_substitutions.yaml": [],
  "pipelineparams.yaml": [
    { name: "tag", value: "latest" },
    { name: "sleep_ms", value: "10" },
  ],
  "recursive_while.yaml": [{ name: "maxVal", value: "12" }],
  "sidecar.yaml": [],
  "timeout.yaml": [],
  "volumeop_basic.yaml": [{ name: "size" }],
  "withitem_basic.yaml": [{ name: "my_pipe_param", value: "10" }],
  "withparam_output.yaml": [],
};

describe("the workflow fixtures", () => {
  it("have expected parameters each, and each expectation a fixture", () => {
    expect(readdirSync(workflowsDir).sort()).toEqual(Object.keys(workflowFixtures).sort());
  });

  it.each(Object.entries(workflowFixtures))("%s parses, as YAML and as JSON", (file, parameters) => {
    const workflow = parseWorkflow(readFileSync(join(workflowsDir, file), "utf8"));
    expect(workflow.kind).toBe("Workflow");
    expect(workflowParameters(workflow)).toEqual(parameters);
    const again = parseWorkflow(JSON.stringify(workflow));
    expect(again).toEqual(workflow);
    expect(workflowParameters(again)).toEqual(parameters);
  });
});

describe("parseWorkflow", () => {
  it("accepts the smallest workflow", () => {
    const workflow = parseWorkflow(header);
    expect(workflow).toEqual({ apiVersion: "argoproj.io/v1alpha1", kind: "Workflow" });
    expect(workflowParameters(workflow)).toEqual([]);
  });

  it("ignores keys it does not know", () => {
    const workflow = parseWorkflow(`${header}whatever: [1, 2]\nspec:\n  surprise: true\n`);
    expect(workflow.whatever).toEqual([1, 2]);
    expect(workflowParameters(workflow)).toEqual([]);
  });

  it("reads JSON, tabs and all", () => {
    const json = '{\n\t"apiVersion": "argoproj.io/v1alpha1",\n\t"kind": "Workflow",\n\t"metadata": {"generateName": "x-"}\n}';
    expect(parseWorkflow(json).metadata).toEqual({ generateName: "x-" });
  });

  it("reads JSON that YAML rejects (repeated keys: the last wins)", () => {
    const json = '{"apiVersion": "argoproj.io/v1alpha1", "kind": "Pod", "kind": "Workflow"}';
    expect(parseWorkflow(json).kind).toBe("Workflow");
  });

  it("takes the first document of a YAML stream", () => {
    expect(parseWorkflow(`---\n${header}---\nkind: Other\n`).kind).toBe("Workflow");
  });

  it("resolves anchors and merge keys", () => {
    const text = `${header}metadata: &m\n  generateName: a-\nspec:\n  x:\n    <<: *m\n    more: 1\n`;
    expect(parseWorkflow(text).spec).toEqual({ x: { generateName: "a-", more: 1 } });
  });

  it.each([
    ["", /^invalid workflow: the manifest is empty$/],
    ["# only a comment\n", /^invalid workflow: the manifest is empty$/],
    ["---\n", /^invalid workflow: expected an object, got nothing$/],
    ["- a\n- b\n", /^invalid workflow: expected an object, got a list$/],
    ["just text", /^invalid workflow: expected an object, got a string$/],
    ["42", /^invalid workflow: expected an object, got a number$/],
    ["a: [1\nb: 2", /^invalid workflow: .* at line \d+, column \d+$/],
    ["a: 1\na: 2", /^invalid workflow: Map keys must be unique/],
    ["a: &x [*x]\nb: *y", /^invalid workflow: /],
  ])("rejects %j", (text, message) => expectInvalid(() => parseWorkflow(text), message));

  it("checks apiVersion first, then kind", () => {
    expectInvalid(
      () => parseWorkflow("apiVersion: v1\nkind: Pod\n"),
      /^Unsupported argo version\. Expected: argoproj\.io\/v1alpha1\. Received: v1$/,
    );
    expectInvalid(() => parseWorkflow("kind: Workflow\n"), /^Unsupported argo version\. Expected: argoproj\.io\/v1alpha1\. Received: $/);
    expectInvalid(
      () => parseWorkflow("apiVersion: argoproj.io/v1alpha1\nkind: CronWorkflow\n"),
      /^Unexpected resource type\. Expected: Workflow\. Received: CronWorkflow$/,
    );
    expectInvalid(
      () => parseWorkflow("apiVersion: argoproj.io/v1alpha1\nkind: 3\n"),
      /^Unexpected resource type\. Expected: Workflow\. Received: 3$/,
    );
  });

  it.each([
    [`${header}spec: [1]\n`, /^invalid workflow: spec must be an object$/],
    [`${header}metadata: name\n`, /^invalid workflow: metadata must be an object$/],
    [`${header}spec:\n  arguments: 7\n`, /^invalid workflow: spec.arguments must be an object$/],
  ])("rejects a workflow whose %j has the wrong shape", (text, message) => expectInvalid(() => parseWorkflow(text), message));

  it("drops empty spec, metadata, arguments and parameters", () => {
    expect(parseWorkflow(`${header}metadata:\nspec:\n`)).toEqual(parseWorkflow(header));
    const workflow = parseWorkflow(`${header}spec:\n  arguments:\n    parameters:\n`);
    expect(workflow.spec).toEqual({ arguments: {} });
    expect(workflowParameters(workflow)).toEqual([]);
  });
});

describe("workflowParameters", () => {
  it("keeps the workflow's order and omits missing values", () => {
    const workflow = parseWorkflow(withArguments("    - name: b\n      value: x\n    - name: a\n    - name: c\n      value:\n"));
    expect(workflowParameters(workflow)).toEqual([{ name: "b", value: "x" }, { name: "a" }, { name: "c" }]);
  });

  it("turns numbers and booleans into strings spelled as written", () => {
    const workflow = parseWorkflow(
      withArguments(
        [
          "    - {name: int, value: 10}",
          "    - {name: float, value: 1.0}",
          "    - {name: hex, value: 0x1F}",
          "    - {name: big, value: 12345678901234567890}",
          "    - {name: bool, value: true}",
          "    - {name: 7, value: seven}",
          "    - {name: quoted, value: '007'}",
          "    - {name: empty, value: ''}",
          "",
        ].join("\n"),
      ),
    );
    expect(workflowParameters(workflow)).toEqual([
      { name: "int", value: "10" },
      { name: "float", value: "1.0" },
      { name: "hex", value: "0x1F" },
      { name: "big", value: "12345678901234567890" },
      { name: "bool", value: "true" },
      { name: "7", value: "seven" },
      { name: "quoted", value: "007" },
      { name: "empty", value: "" },
    ]);
    // The workflow itself holds the strings, as Argo would.
    expect((workflow.spec?.arguments?.parameters as { value: unknown }[])[1]!.value).toBe("1.0");
  });

  it("turns JSON numbers into strings", () => {
    const workflow = parseWorkflow(
      JSON.stringify({
        apiVersion: "argoproj.io/v1alpha1",
        kind: "Workflow",
        spec: { arguments: { parameters: [{ name: "n", value: 2.5 }] } },
      }),
    );
    expect(workflowParameters(workflow)).toEqual([{ name: "n", value: "2.5" }]);
  });

  it.each([
    ["a list that is not", "      name: a\n", /^invalid workflow: spec.arguments.parameters must be a list$/],
    ["an entry that is not an object", "    - a\n", /^invalid workflow: spec.arguments.parameters\[0\] must be an object$/],
    ["a missing name", "    - value: x\n", /^invalid workflow: spec.arguments.parameters\[0\] needs a name$/],
    ["an empty name", "    - name: ''\n", /^invalid workflow: spec.arguments.parameters\[0\] needs a name$/],
    ["a name that is a list", "    - name: [a]\n", /needs a name$/],
    ["a repeated name", "    - name: a\n    - name: b\n    - name: a\n", /^invalid workflow: parameter a is declared more than once$/],
    ["a value that is an object", "    - name: a\n      value: {x: 1}\n", /^invalid workflow: the value of parameter a must be a string$/],
  ])("rejects %s", (_what, parameters, message) => {
    expectInvalid(() => workflowParameters(parseWorkflow(withArguments(parameters))), message);
  });

  it("allows 10000 bytes of parameters as JSON, not one more", () => {
    // [{"name":"p","value":"…"}] is 25 bytes around the value.
    const at = (length: number) =>
      parseWorkflow(withArguments(`    - name: p\n      value: ${"v".repeat(length)}\n`));
    expect(JSON.stringify(workflowParameters(at(10_000 - 25)))).toHaveLength(10_000);
    expectInvalid(() => workflowParameters(at(10_000 - 24)), /^The input parameter length exceed maximum size of 10000\.$/);
  });
});

describe("withParameterValues", () => {
  const workflow = parseWorkflow(
    withArguments("    - name: first\n      value: one\n    - name: second\n    - name: third\n      value: three\n"),
  );
  const parametersOf = (w: Workflow) => w.spec?.arguments?.parameters;

  it("overrides values and keeps the workflow's order", () => {
    const result = withParameterValues(workflow, [
      { name: "third", value: "3" },
      { name: "second", value: "2" },
    ]);
    expect(parametersOf(result)).toEqual([
      { name: "first", value: "one" },
      { name: "second", value: "2" },
      { name: "third", value: "3" },
    ]);
  });

  it("leaves the original workflow alone", () => {
    const before = structuredClone(workflow);
    withParameterValues(workflow, [{ name: "first", value: "changed" }]);
    expect(workflow).toEqual(before);
  });

  it("keeps a default when a value is undefined, and sets empty strings", () => {
    const result = withParameterValues(workflow, [{ name: "first" }, { name: "third", value: "" }]);
    expect(workflowParameters(result)).toEqual([
      { name: "first", value: "one" },
      { name: "second" },
      { name: "third", value: "" },
    ]);
  });

  it("returns an equal copy when no values are given", () => {
    const result = withParameterValues(workflow, []);
    expect(result).toEqual(workflow);
    expect(result).not.toBe(workflow);
  });

  it("rejects a name the workflow does not declare", () => {
    expectInvalid(() => withParameterValues(workflow, [{ name: "fourth", value: "4" }]), /^Unrecognized input parameter: fourth$/);
    expectInvalid(() => withParameterValues(parseWorkflow(header), [{ name: "x", value: "1" }]), /^Unrecognized input parameter: x$/);
  });

  it("keeps everything else of the workflow", () => {
    const text = readFileSync(join(workflowsDir, "arguments-parameters.yaml"), "utf8");
    const original = parseWorkflow(text);
    const result = withParameterValues(original, [
      { name: "param1", value: "goodbye" },
      { name: "param2", value: "world" },
    ]);
    expect({ ...result, spec: { ...result.spec, arguments: undefined } }).toEqual({
      ...original,
      spec: { ...original.spec, arguments: undefined },
    });
    expect(workflowParameters(result)).toEqual([
      { name: "param1", value: "goodbye" },
      { name: "param2", value: "world" },
    ]);
  });
});
