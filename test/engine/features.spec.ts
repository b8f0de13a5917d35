// The local engine's features one by one, each through the API with a small workflow.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSingleFile } from "../../src/engine/local/artifact-archive.js";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { runDetail, runToEnd, startRun, waitForRun } from "./helpers.js";

type Template = Record<string, unknown>;
const workflow = (templates: Template[], extra: Record<string, unknown> = {}) => ({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Workflow",
  metadata: { generateName: "feature-" },
  spec: { entrypoint: "main", templates, ...extra },
});
const shell = (name: string, script: string, more: Template = {}): Template => ({
  name,
  container: { image: "alpine", command: ["sh", "-c"], args: [script] },
  ...more,
});

describe("the local engine", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it("passes parameters and artifacts between tasks, with workflow variables", async () => {
    const run = await runToEnd(
      t,
      workflow(
        [
          {
            name: "main",
            dag: {
              tasks: [
                { name: "make", template: "make", arguments: { parameters: [{ name: "word", value: "{{workflow.parameters.word}}" }] } },
                {
                  name: "use",
                  template: "use",
                  dependencies: ["make"],
                  arguments: {
                    parameters: [{ name: "count", value: "{{tasks.make.outputs.parameters.count}}" }],
                    artifacts: [{ name: "data", from: "{{tasks.make.outputs.artifacts.data}}" }],
                  },
                },
              ],
            },
          },
          shell("make", "mkdir -p /tmp/out/dir && echo {{inputs.parameters.word}} > /tmp/out/dir/a.txt && echo 3 > /tmp/count && echo {{workflow.name}} {{pod.name}}", {
            inputs: { parameters: [{ name: "word" }] },
            outputs: { parameters: [{ name: "count", valueFrom: { path: "/tmp/count" } }], artifacts: [{ name: "data", path: "/tmp/out/dir" }] },
          }),
          shell("use", "cat /in/dir/a.txt > /tmp/result && echo {{inputs.parameters.count}} >> /tmp/result", {
            inputs: { parameters: [{ name: "count" }], artifacts: [{ name: "data", path: "/in/dir" }] },
            outputs: { parameters: [{ name: "result", valueFrom: { path: "/tmp/result" } }] },
          }),
        ],
        { arguments: { parameters: [{ name: "word", value: "default" }] } },
      ),
      [{ name: "word", value: "pipewright" }],
    );
    expect(run.status).toBe("Succeeded");
    expect(run.byDisplayName("use").outputs?.parameters).toEqual([{ name: "result", value: "pipewright\n3" }]);
    const make = run.byDisplayName("make");
    expect(make.outputs?.artifacts?.map((a) => a.name).sort()).toEqual(["data", "main-logs"]);
    const logs = await t.rest("GET", `/apis/v1beta1/runs/${run.id}/nodes/${make.id}/artifacts/main-logs:read`);
    expect(new TextDecoder().decode(await readSingleFile(Buffer.from(logs.body.data, "base64")))).toBe(`${run.workflow.metadata.name} ${make.id}\n`);
  });

  it("places raw input artifacts, names their paths, and falls back to output defaults", async () => {
    const run = await runToEnd(
      t,
      workflow([
        {
          name: "main",
          dag: { tasks: [{ name: "read", template: "read" }] },
          outputs: { parameters: [{ name: "copied", valueFrom: { parameter: "{{tasks.read.outputs.parameters.copy}}" } }] },
        },
        shell("read", "cat {{inputs.artifacts.notes.path}} > /tmp/copy", {
          inputs: { artifacts: [{ name: "notes", path: "/in/notes.txt", raw: { data: "raw text" } }] },
          outputs: {
            parameters: [
              { name: "copy", valueFrom: { path: "/tmp/copy" } },
              { name: "absent", valueFrom: { path: "/tmp/never-written", default: "fallback" } },
            ],
          },
        }),
      ]),
    );
    expect(run.status).toBe("Succeeded");
    expect(run.byDisplayName("read").outputs?.parameters).toEqual([
      { name: "copy", value: "raw text" },
      { name: "absent", value: "fallback" },
    ]);
    expect(run.nodes.find((n) => n.type === "DAG")?.outputs?.parameters).toEqual([{ name: "copied", value: "raw text" }]);
  });

  it("loops over items and over a JSON output, and aggregates loop outputs", async () => {
    const run = await runToEnd(
      t,
      workflow([
        {
          name: "main",
          dag: {
            tasks: [
              { name: "list", template: "list" },
              { name: "each", template: "echo", dependencies: ["list"], withParam: "{{tasks.list.outputs.parameters.items}}", arguments: { parameters: [{ name: "v", value: "{{item.n}}" }] } },
              { name: "fixed", template: "echo", withItems: ["a", "b", "c"], arguments: { parameters: [{ name: "v", value: "{{item}}" }] } },
              { name: "seq", template: "echo", withSequence: { count: "2", start: "5" }, arguments: { parameters: [{ name: "v", value: "{{item}}" }] } },
            ],
          },
        },
        shell("list", `echo '[{"n": 1}, {"n": 2}]' > /tmp/items`, { outputs: { parameters: [{ name: "items", valueFrom: { path: "/tmp/items" } }] } }),
        shell("echo", "echo -n {{inputs.parameters.v}} > /tmp/v", { inputs: { parameters: [{ name: "v" }] }, outputs: { parameters: [{ name: "v", valueFrom: { path: "/tmp/v" } }] } }),
      ]),
    );
    expect(run.status).toBe("Succeeded");
    const names = run.nodes.filter((n) => n.type === "Pod").map((n) => n.displayName).sort();
    expect(names).toEqual(["each(0:n:1)", "each(1:n:2)", "fixed(0:a)", "fixed(1:b)", "fixed(2:c)", "list", "seq(0:5)", "seq(1:6)"]);
  });

  it("skips tasks whose condition is false, runs their dependents, and fails a DAG with a failed task", async () => {
    const run = await runToEnd(
      t,
      workflow([
        {
          name: "main",
          dag: {
            tasks: [
              { name: "skipped", template: "ok", when: "1 > 2 && ('a' == 'a' || !false)" },
              { name: "after-skip", template: "ok", dependencies: ["skipped"] },
              { name: "bad", template: "fail" },
              { name: "after-bad", template: "ok", dependencies: ["bad"] },
            ],
          },
        },
        shell("ok", "true"),
        shell("fail", "exit 3"),
      ]),
    );
    expect(run.status).toBe("Failed");
    expect(run.byDisplayName("skipped")).toMatchObject({ type: "Skipped", phase: "Skipped" });
    expect(run.byDisplayName("after-skip").phase).toBe("Succeeded");
    expect(run.byDisplayName("bad")).toMatchObject({ phase: "Failed", message: "failed with exit code 3" });
    expect(run.nodes.some((n) => n.displayName === "after-bad")).toBe(false);
  });

  it("runs steps in sequence and the exit handler with the workflow's status", async () => {
    const run = await runToEnd(
      t,
      workflow(
        [
          { name: "main", steps: [[{ name: "one", template: "ok" }], [{ name: "two", template: "fail" }, { name: "three", template: "ok" }]] },
          shell("ok", "true"),
          shell("fail", "false"),
          shell("exit", "echo -n {{workflow.status}} > /tmp/s", { outputs: { parameters: [{ name: "s", valueFrom: { path: "/tmp/s" } }] } }),
        ],
        { onExit: "exit" },
      ),
    );
    expect(run.status).toBe("Failed");
    expect(run.nodes.filter((n) => n.type === "StepGroup").map((n) => n.displayName)).toEqual(["[0]", "[1]"]);
    expect(run.byDisplayName(`${run.workflow.metadata.name}.onExit`).outputs?.parameters).toEqual([{ name: "s", value: "Failed" }]);
  });

  it("retries a failing step up to its limit, with Retry nodes as Argo shows them", async () => {
    const run = await runToEnd(
      t,
      workflow([
        { name: "main", dag: { tasks: [{ name: "flaky", template: "flaky" }] } },
        shell("flaky", "test -e /tmp/never", { retryStrategy: { limit: 2 } }),
      ]),
    );
    expect(run.status).toBe("Failed");
    const retry = run.byDisplayName("flaky");
    expect(retry).toMatchObject({ type: "Retry", phase: "Failed" });
    expect(retry.children).toHaveLength(3);
    expect(run.nodes.filter((n) => n.type === "Pod").map((n) => n.displayName).sort()).toEqual(["flaky(0)", "flaky(1)", "flaky(2)"]);
  });

  it("kills a step at its timeout and a workflow at its deadline", async () => {
    const step = await runToEnd(t, workflow([shell("main", "sleep 30", { activeDeadlineSeconds: 1 })]));
    expect(step.status).toBe("Failed");
    expect(step.nodes[0].message).toMatch(/timeout/);
    const whole = await runToEnd(t, workflow([shell("main", "sleep 30")], { activeDeadlineSeconds: 1 }));
    expect(whole.status).toBe("Failed");
    expect(whole.workflow.status.message).toBe("Max duration limit exceeded");
  });

  it("gives concurrent steps their own filesystem views", async () => {
    const write = (value: string) => `echo ${value} > /tmp/outputs/data && echo '{"metrics":[{"name":"value","numberValue":${value.length}}]}' > /mlpipeline-metrics.json && sleep 0.3 && cat /tmp/outputs/data > /tmp/seen`;
    const run = await runToEnd(
      t,
      workflow([
        { name: "main", dag: { tasks: [{ name: "a", template: "a" }, { name: "b", template: "b" }] } },
        shell("a", `mkdir -p /tmp/outputs && ${write("alpha")}`, { outputs: { parameters: [{ name: "seen", valueFrom: { path: "/tmp/seen" } }], artifacts: [{ name: "mlpipeline-metrics", path: "/mlpipeline-metrics.json" }] } }),
        shell("b", `mkdir -p /tmp/outputs && ${write("beta")}`, { outputs: { parameters: [{ name: "seen", valueFrom: { path: "/tmp/seen" } }], artifacts: [{ name: "mlpipeline-metrics", path: "/mlpipeline-metrics.json" }] } }),
      ]),
    );
    expect(run.status).toBe("Succeeded");
    expect(run.byDisplayName("a").outputs?.parameters?.[0].value).toBe("alpha");
    expect(run.byDisplayName("b").outputs?.parameters?.[0].value).toBe("beta");
    const { existsSync } = await import("node:fs");
    expect(existsSync("/mlpipeline-metrics.json")).toBe(false);
    expect(run.run.metrics.map((m: { node_id: string; number_value: number }) => [m.node_id, m.number_value]).sort()).toEqual(
      [[run.byDisplayName("a").id, 5], [run.byDisplayName("b").id, 4]].sort(),
    );
  });

  it("honours the workflow's parallelism and gives steps the KFP environment", async () => {
    const step = shell("step", 'echo "$(date +%s%N) start $KFP_RUN_ID $ARGO_NODE_ID $KFP_POD_NAME" && sleep 0.2 && echo "$(date +%s%N) end"');
    const run = await runToEnd(
      t,
      workflow([{ name: "main", dag: { tasks: ["a", "b", "c"].map((name) => ({ name, template: "step" })) } }, step], { parallelism: 1 }),
    );
    expect(run.status).toBe("Succeeded");
    const spans: Array<[number, number]> = [];
    for (const node of run.nodes.filter((n) => n.type === "Pod")) {
      const logs = await t.rest("GET", `/apis/v1beta1/runs/${run.id}/nodes/${node.id}/artifacts/main-logs:read`);
      const [start, end] = new TextDecoder().decode(await readSingleFile(Buffer.from(logs.body.data, "base64"))).trim().split("\n");
      expect(start).toMatch(new RegExp(` start ${run.id} ${node.id} ${node.id}$`));
      spans.push([Number(start.split(" ")[0]), Number(end.split(" ")[0])]);
    }
    spans.sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < spans.length; i++) expect(spans[i][0], "steps ran one at a time").toBeGreaterThanOrEqual(spans[i - 1][1]);
  });

  it("ends templates it cannot run with a clear node error", async () => {
    const run = await runToEnd(t, workflow([{ name: "main", suspend: {} }]));
    expect(run.status).toBe("Error");
    expect(run.nodes[0]).toMatchObject({ phase: "Error", message: expect.stringMatching(/suspend/) });
  });

  it("terminates a run within two seconds, marking killed steps terminated", async () => {
    const id = await startRun(t, workflow([shell("main", "sleep 60 & sleep 60")]));
    for (let i = 0; i < 100 && (await runDetail(t, id)).nodes[0]?.phase !== "Running"; i++) await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    expect((await t.rest("POST", `/apis/v1beta1/runs/${id}/terminate`)).status).toBe(200);
    const run = await waitForRun(t, id, 5000);
    expect(Date.now() - started).toBeLessThan(2500);
    expect(run.status).toBe("Failed");
    expect(run.nodes[0]).toMatchObject({ phase: "Failed", message: "terminated" });
  });
});
