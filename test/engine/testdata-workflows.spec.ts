// Every compiled workflow of the test data, run by the local engine through the API: those
// whose commands exist here reach the phase Argo would give them, with Argo's node tree; the
// others end with a clear per-node error.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { workflowFile } from "../pipelines/fixtures.js";
import { commandExists, expectWellFormedTree, runToEnd, type FinishedRun } from "./helpers.js";

const hasPython = commandExists("python");
const manifest = (name: string) => readFileSync(workflowFile(name), "utf8");
// gsutil is installed here but Google Cloud Storage is out of reach: those runs get a deadline.
const withDeadline = (name: string, seconds: number) => {
  const workflow = parseYaml(manifest(name));
  workflow.spec.activeDeadlineSeconds = seconds;
  return workflow;
};

interface Expectation {
  file: string;
  deadlineSeconds?: number;
  phase: string | string[];
  check?: (run: FinishedRun) => void;
}

const missing = (command: string) => (run: FinishedRun) => {
  const failedPod = run.nodes.find((n) => n.type === "Pod" && n.phase === "Failed");
  expect(failedPod?.message, `a step fails because ${command} is missing`).toMatch(/exit code 127/);
};

const unsupported = (pattern: RegExp) => (run: FinishedRun) => {
  expect(run.nodes.some((n) => n.phase === "Error" && pattern.test(n.message ?? ""))).toBe(true);
};

const expectations: Expectation[] = [
  { file: "hello-world.yaml", phase: commandExists("cowsay") ? "Succeeded" : "Failed", check: commandExists("cowsay") ? undefined : missing("cowsay") },
  { file: "arguments-parameters.yaml", phase: commandExists("cowsay") ? "Succeeded" : "Failed" },
  { file: "loops.yaml", phase: commandExists("cowsay") ? "Succeeded" : "Failed", check: (run) => {
    expect(run.nodes.filter((n) => n.type === "StepGroup")).toHaveLength(1);
    expect(run.nodes.filter((n) => n.type === "Pod").map((n) => n.displayName).sort()).toEqual(["print-message(0:hello world)", "print-message(1:goodbye world)"]);
  } },
  {
    file: "withitem_basic.yaml",
    phase: "Succeeded",
    check: (run) => {
      const loop = run.nodes.filter((n) => n.displayName.startsWith("for-loop-2("));
      expect(loop).toHaveLength(2);
      expect(run.nodes.filter((n) => n.type === "Pod")).toHaveLength(5);
    },
  },
  {
    file: "withparam_output.yaml",
    phase: hasPython ? "Succeeded" : "Failed",
    check: hasPython
      ? (run) => {
          expect(run.nodes.filter((n) => n.displayName.startsWith("for-loop-1("))).toHaveLength(11);
          expect(run.byDisplayName("my-out-cop0").outputs?.parameters?.[0].value).toBe("[20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30]");
        }
      : missing("python"),
  },
  {
    file: "coin.yaml",
    phase: hasPython ? "Succeeded" : "Failed",
    check: hasPython
      ? (run) => {
          const flip = run.byDisplayName("flip").outputs?.parameters?.[0].value;
          expect(["heads", "tails"]).toContain(flip);
          expect(run.byDisplayName("condition-1").type).toBe(flip === "heads" ? "DAG" : "Skipped");
          expect(run.byDisplayName("condition-3").type).toBe(flip === "tails" ? "DAG" : "Skipped");
        }
      : undefined,
  },
  { file: "recursive_while.yaml", phase: hasPython ? "Succeeded" : "Failed" },
  { file: "timeout.yaml", phase: hasPython ? ["Succeeded", "Failed"] : "Failed" },
  // gsutil needs Google Cloud Storage, which this machine cannot reach.
  {
    file: "basic.yaml",
    deadlineSeconds: 8,
    phase: "Failed",
    check: (run) => expect(run.byDisplayName(`${run.workflow.metadata.name}.onExit`).phase).toBe("Succeeded"),
  },
  { file: "compose.yaml", deadlineSeconds: 8, phase: "Failed" },
  { file: "default_value.yaml", deadlineSeconds: 8, phase: "Failed" },
  { file: "param_substitutions.yaml", phase: ["Failed", "Error"], check: unsupported(/Kubernetes resource/) },
  { file: "volumeop_basic.yaml", phase: ["Failed", "Error"], check: unsupported(/Kubernetes resource/) },
  { file: "sidecar.yaml", phase: ["Failed", "Error"], check: unsupported(/sidecars/) },
  { file: "pipelineparams.yaml", phase: ["Failed", "Error"], check: unsupported(/sidecars/) },
];

describe("the test data's workflows on the local engine", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it("has an expectation for every workflow except the five-minute one", async () => {
    const { readdirSync } = await import("node:fs");
    const files = readdirSync(workflowFile("")).filter((f) => f.endsWith(".yaml") && f !== "long-running.yaml");
    expect(expectations.map((e) => e.file).sort()).toEqual(files.sort());
  });

  it.each(expectations)("runs $file", async ({ file, phase, check, deadlineSeconds }) => {
    const run = await runToEnd(t, deadlineSeconds ? withDeadline(file, deadlineSeconds) : manifest(file));
    expect([phase].flat()).toContain(run.status);
    expect(run.workflow.status.phase).toBe(run.status);
    expectWellFormedTree(run);
    check?.(run);
  });
});
