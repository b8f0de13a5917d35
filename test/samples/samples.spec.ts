// Every pipeline in samples/: shaped as the README promises, uploaded through the API and run by
// the local engine to Succeeded with its default parameters; each sample's point checked.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { readSingleFile } from "../../src/engine/local/artifact-archive.js";
import { expectWellFormedTree, waitForRun, type FinishedRun } from "../engine/helpers.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { upload } from "../pipelines/fixtures.js";
import { repoRoot } from "./readme.js";

const samplesDir = join(repoRoot, "samples");
const samples = readdirSync(samplesDir)
  .filter((name) => name.endsWith(".yaml"))
  .sort();

const podNames = (run: FinishedRun) =>
  run.nodes
    .filter((n) => n.type === "Pod")
    .map((n) => n.displayName)
    .sort();
const output = (run: FinishedRun, node: string, name: string) => run.byDisplayName(node).outputs?.parameters?.find((p) => p.name === name)?.value;

/** What each sample is for, checked on its run with default parameters. */
const checks: Record<string, (run: FinishedRun, t: TestServer) => Promise<void> | void> = {
  "hello-parameters.yaml": (run) => {
    expect(podNames(run)).toEqual(["say"]);
    expect(output(run, "say", "say-greeting")).toBe("hello, Pipewright!");
  },
  "dag-metrics.yaml": async (run, t) => {
    expect(podNames(run)).toEqual(["evaluate", "produce", "transform"]);
    expect(output(run, "produce", "produce-count")).toBe("5");
    expect(output(run, "transform", "transform-sum")).toBe("30");
    const evaluate = run.byDisplayName("evaluate");
    expect(run.run.metrics).toEqual([
      { name: "accuracy", node_id: evaluate.id, number_value: 0.8, format: "PERCENTAGE" },
      { name: "values-checked", node_id: evaluate.id, number_value: 5, format: "RAW" },
    ]);
    const read = await t.rest("GET", `/apis/v1beta1/runs/${run.id}/nodes/${evaluate.id}/artifacts/evaluate-report:read`);
    expect(read.status).toBe(200);
    const report = new TextDecoder().decode(await readSingleFile(Buffer.from(read.body.data, "base64")));
    expect(report).toBe("4 of 5 values >= 3\naccuracy 0.800\n");
  },
  "loop-condition.yaml": (run) => {
    expect(podNames(run)).toEqual(["describe", "describe", "keep", "keep", "measure", "measure", "measure", "measure"]);
    const loops = run.nodes.filter((n) => n.type === "DAG" && /^for-loop-\d\(/.test(n.displayName)).map((n) => n.displayName);
    expect(loops.sort()).toEqual([
      "for-loop-1(0:kubeflow)",
      "for-loop-1(1:argo)",
      "for-loop-1(2:pipelines)",
      "for-loop-1(3:dag)",
      "for-loop-2(0:shape:triangle,sides:3)",
      "for-loop-2(1:shape:square,sides:4)",
    ]);
    const skipped = run.nodes.filter((n) => n.type === "Skipped");
    expect(skipped.map((n) => n.message).sort()).toEqual(["when '3 >= 5' evaluated false", "when '4 >= 5' evaluated false"]);
    const kept = run.nodes.filter((n) => n.displayName === "keep").map((n) => n.inputs?.parameters?.[0].value);
    expect(kept.sort()).toEqual(["kubeflow", "pipelines"]);
  },
  "exit-handler.yaml": (run) => {
    expect(podNames(run)).toEqual(["count-words", `${run.workflow.metadata.name}.onExit`, "shout"]);
    expect(output(run, "shout", "shout-loud")).toBe("PIPELINES ON A LAPTOP");
    expect(output(run, `${run.workflow.metadata.name}.onExit`, "report-status")).toBe("Succeeded");
  },
};

describe("the samples", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it("are three or four, each with its checks", () => {
    expect(samples.length).toBeGreaterThanOrEqual(3);
    expect(samples.length).toBeLessThanOrEqual(4);
    expect(Object.keys(checks).sort()).toEqual(samples);
  });

  for (const file of samples) {
    describe(file, () => {
      const text = readFileSync(join(samplesDir, file), "utf8");
      const workflow = parseYaml(text);

      it("is an Argo Workflow with a one-line comment on top and a default for every parameter", () => {
        const [first, second] = text.split("\n");
        expect(first).toMatch(/^# \S.{10,}$/);
        expect(second.startsWith("#")).toBe(false);
        expect(workflow).toMatchObject({ apiVersion: "argoproj.io/v1alpha1", kind: "Workflow" });
        expect(workflow.metadata.generateName).toMatch(/^[a-z][-a-z0-9]*-$/);
        const templates = workflow.spec.templates.map((template: { name: string }) => template.name);
        expect(templates).toContain(workflow.spec.entrypoint);
        const parameters = workflow.spec.arguments.parameters as { name: string; value?: unknown }[];
        expect(parameters.length).toBeGreaterThan(0);
        for (const parameter of parameters) expect(typeof parameter.value, parameter.name).toBe("string");
      });

      it("uploads and runs to Succeeded through the API", async () => {
        const uploaded = await upload(t.server.httpUrl, file, readFileSync(join(samplesDir, file)), `?name=${file.replace(/\.yaml$/, "")}`);
        expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(200);
        expect(uploaded.body.parameters).toEqual(workflow.spec.arguments.parameters);
        const created = await t.rest("POST", "/apis/v1beta1/runs", { name: `sample ${file}`, pipeline_spec: { pipeline_id: uploaded.body.id } });
        expect(created.status, created.text).toBe(200);
        const run = await waitForRun(t, created.body.run.id);
        const failures = run.nodes.filter((n) => n.phase !== "Succeeded" && n.phase !== "Skipped").map((n) => `${n.displayName}: ${n.phase} ${n.message ?? ""}`);
        expect(run.status, failures.join("\n")).toBe("Succeeded");
        expect(failures).toEqual([]);
        expectWellFormedTree(run);
        await checks[file]?.(run, t);
      });
    });
  }
});
