import { describe, expect, it } from "vitest";
import { matchPathTemplate, parsePathTemplate, splitPath } from "../../src/transcoding/path-template.js";

const match = (template: string, path: string) => matchPathTemplate(parsePathTemplate(template), splitPath(path));

describe("parsePathTemplate", () => {
  it.each([
    ["/apis/v1beta1/runs", [{ kind: "literal", value: "apis" }, { kind: "literal", value: "v1beta1" }, { kind: "literal", value: "runs" }], [], undefined],
    ["/runs/{id}", [{ kind: "literal", value: "runs" }, { kind: "any" }], [{ fieldPath: "id", start: 1, end: 2 }], undefined],
    ["/runs/{id}:archive", [{ kind: "literal", value: "runs" }, { kind: "any" }], [{ fieldPath: "id", start: 1, end: 2 }], "archive"],
    [
      "/v1/{name=artifact_types/**/artifacts/*}",
      [{ kind: "literal", value: "v1" }, { kind: "literal", value: "artifact_types" }, { kind: "rest" }, { kind: "literal", value: "artifacts" }, { kind: "any" }],
      [{ fieldPath: "name", start: 1, end: 5 }],
      undefined,
    ],
    ["/v1/{a.b_c=**}", [{ kind: "literal", value: "v1" }, { kind: "rest" }], [{ fieldPath: "a.b_c", start: 1, end: 2 }], undefined],
    ["/v1/*/x", [{ kind: "literal", value: "v1" }, { kind: "any" }, { kind: "literal", value: "x" }], [], undefined],
    ["/v1/kubeflow.org", [{ kind: "literal", value: "v1" }, { kind: "literal", value: "kubeflow.org" }], [], undefined],
  ])("parses %s", (source, segments, variables, verb) => {
    expect(parsePathTemplate(source)).toEqual({ source, segments, variables, verb });
  });

  it.each([
    ["v1/runs", /expected "\/"/],
    ["/", /expected a path segment/],
    ["/v1//runs", /expected a path segment/],
    ["/v1/{id", /expected "}"/],
    ["/v1/{}", /expected a field path/],
    ["/v1/{1d}", /expected a field path/],
    ["/v1/{a={b}}", /nested variable/],
    ["/v1/{a}/{a}", /a bound twice/],
    ["/v1/{a=**}/{b=**}", /more than one \*\*/],
    ["/v1/runs:", /expected a verb/],
    ["/v1/{id}:a/b", /unexpected "\/"/],
    ["/v1/runs}", /unexpected "}"/],
  ])("rejects %s", (source, error) => {
    expect(() => parsePathTemplate(source)).toThrow(error);
  });
});

describe("splitPath", () => {
  it.each([
    ["/a/b", ["a", "b"]],
    ["/a%20b/c", ["a b", "c"]],
    ["/kubeflow.org%2Falpha%2fmodel", ["kubeflow.org", "alpha", "model"]],
    ["/a/", ["a", ""]],
    ["/a+b", ["a+b"]],
  ])("splits %s", (path, segments) => {
    expect(splitPath(path)).toEqual(segments);
  });

  it("throws on malformed percent-encoding", () => {
    expect(() => splitPath("/a/%zz")).toThrow(URIError);
    expect(() => splitPath("/a/%E0%A4%A")).toThrow(URIError);
  });
});

describe("matchPathTemplate", () => {
  it.each([
    // literals
    ["/apis/v1beta1/runs", "/apis/v1beta1/runs", {}],
    ["/apis/v1beta1/runs", "/apis/v1beta1/jobs", undefined],
    ["/apis/v1beta1/runs", "/apis/v1beta1/runs/x", undefined],
    ["/apis/v1beta1/runs", "/apis/v1beta1", undefined],
    // {var} is one segment
    ["/runs/{id}", "/runs/abc", { id: "abc" }],
    ["/runs/{id}", "/runs/a/b", undefined],
    ["/runs/{id}", "/runs/a%2Fb", undefined],
    ["/runs/{id}", "/runs/a%20b", { id: "a b" }],
    // a colon in a verbless template is part of the value
    ["/runs/{id}", "/runs/a:b", { id: "a:b" }],
    // several variables
    ["/runs/{run_id}/nodes/{node_id}", "/runs/r/nodes/n", { run_id: "r", node_id: "n" }],
    // literal prefixes stay in the captured value
    ["/v1/{name=artifact_types/**}", "/v1/artifact_types/kubeflow.org/alpha/model", { name: "artifact_types/kubeflow.org/alpha/model" }],
    ["/v1/{name=events/*}", "/v1/events/7", { name: "events/7" }],
    ["/v1/{name=events/*}", "/v1/executions/7", undefined],
    // ** matches zero segments
    ["/v1/{name=artifact_types/**}", "/v1/artifact_types", { name: "artifact_types" }],
    ["/v1/{name=**}", "/v1", { name: "" }],
    ["/v1/{name=**}/x", "/v1/x", { name: "" }],
    // ** leaves the fixed tail what it needs
    ["/v1/{name=artifact_types/**}/artifacts", "/v1/artifact_types/a/b/artifacts", { name: "artifact_types/a/b" }],
    ["/v1/{name=artifact_types/**}/artifacts", "/v1/artifact_types/artifacts/artifacts", { name: "artifact_types/artifacts" }],
    ["/v1/{name=artifact_types/**/artifacts/*}", "/v1/artifact_types/a/b/artifacts/7", { name: "artifact_types/a/b/artifacts/7" }],
    ["/v1/{name=artifact_types/**/artifacts/*}", "/v1/artifact_types/a/artifacts/7", { name: "artifact_types/a/artifacts/7" }],
    ["/v1/{name=artifact_types/**/artifacts/*}", "/v1/artifact_types/a/b/artifacts", undefined],
    ["/v1/{name=artifact_types/**/artifacts/*}", "/v1/artifact_types/artifacts", undefined],
    // %2F separates segments
    ["/v1/{name=artifact_types/**}/artifacts", "/v1/artifact_types/kubeflow.org%2Falpha%2Fmodel/artifacts", { name: "artifact_types/kubeflow.org/alpha/model" }],
    // verbs
    ["/runs/{id}:archive", "/runs/abc:archive", { id: "abc" }],
    ["/runs/{id}:archive", "/runs/abc:unarchive", undefined],
    ["/runs/{id}:archive", "/runs/abc", undefined],
    ["/runs/{id}:archive", "/runs/a:b:archive", { id: "a:b" }],
    ["/runs/{id}:archive", "/runs/abc%3Aarchive", { id: "abc" }],
    ["/runs/{run_id}/nodes/{node_id}/artifacts/{artifact_name}:read", "/runs/r1/nodes/n1/artifacts/a1:read", { run_id: "r1", node_id: "n1", artifact_name: "a1" }],
    ["/v1/{name=**}:read", "/v1/a/b:read", { name: "a/b" }],
    // unbound wildcards
    ["/v1/*/x", "/v1/anything/x", {}],
    ["/v1/**", "/v1/a/b/c", {}],
  ])("%s on %s", (template, path, expected) => {
    expect(match(template, path)).toEqual(expected);
  });
});
