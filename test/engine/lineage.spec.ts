// Lineage: every step a run executes is recorded in the metadata service (an execution, its
// stored outputs as artifacts with OUTPUT events, the artifacts it consumed as INPUT events),
// read back over the metadata REST API.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { runToEnd, type FinishedRun } from "./helpers.js";

const api = "/api/v1alpha1";
const stepType = "pipewright.org/pipeline_step";
const artifactType = "pipewright.org/step_artifact";

type Template = Record<string, unknown>;
const workflow = (tasks: Template[], templates: Template[]) => ({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Workflow",
  metadata: { generateName: "lineage-" },
  spec: { entrypoint: "main", templates: [{ name: "main", dag: { tasks } }, ...templates] },
});
const shell = (name: string, script: string, more: Template = {}): Template => ({
  name,
  container: { image: "alpine", command: ["sh", "-c"], args: [script] },
  ...more,
});

interface RestExecution {
  id: string;
  type_id: string;
  last_known_state?: string;
  properties: Record<string, { string_value: string }>;
}
interface RestEvent {
  artifact_id: string;
  execution_id: string;
  type: string;
  path?: { steps: { key?: string }[] };
}
interface RestArtifact {
  id: string;
  uri: string;
  properties: Record<string, { string_value: string }>;
}

const prop = (node: { properties: Record<string, { string_value: string }> }, name: string) => node.properties[name]?.string_value;

async function executionsOf(t: TestServer, runId: string): Promise<RestExecution[]> {
  const res = await t.rest("GET", `${api}/execution_types/${stepType}/executions`);
  expect(res.status).toBe(200);
  return (res.body.executions ?? []).filter((e: RestExecution) => prop(e, "run_id") === runId);
}

async function eventsOf(t: TestServer, name: string) {
  const res = await t.rest("GET", `${api}/events/${name}`);
  expect(res.status).toBe(200);
  return res.body as { events: RestEvent[]; artifacts: Record<string, RestArtifact>; executions: Record<string, RestExecution> };
}

describe("step lineage in the metadata service", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it("registers no types of its own before something runs", async () => {
    const executionTypes = (await t.rest("GET", `${api}/execution_types`)).body.execution_types.map((x: { name: string }) => x.name);
    const artifactTypes = (await t.rest("GET", `${api}/artifact_types`)).body.artifact_types.map((x: { name: string }) => x.name);
    expect(executionTypes).not.toContain(stepType);
    expect(artifactTypes).not.toContain(artifactType);
  });

  describe("a run where one step consumes another's output", () => {
    let run: FinishedRun;
    let executions: RestExecution[];
    const executionOf = (displayName: string) => {
      const found = executions.find((e) => prop(e, "display_name") === displayName);
      if (!found) throw new Error(`no execution for ${displayName}`);
      return found;
    };

    beforeAll(async () => {
      run = await runToEnd(
        t,
        workflow(
          [
            { name: "make", template: "producer" },
            { name: "use", template: "consumer", dependencies: ["make"], arguments: { artifacts: [{ name: "incoming", from: "{{tasks.make.outputs.artifacts.data}}" }] } },
          ],
          [
            shell("producer", "echo hello > /tmp/data.txt", { outputs: { artifacts: [{ name: "data", path: "/tmp/data.txt" }] } }),
            shell("consumer", "cat /in/data.txt", { inputs: { artifacts: [{ name: "incoming", path: "/in/data.txt" }] } }),
          ],
        ),
      );
      expect(run.status).toBe("Succeeded");
      executions = await executionsOf(t, run.id);
    });

    it("registers the execution type and the artifact type", async () => {
      const execution = await t.rest("GET", `${api}/execution_types/${stepType}`);
      expect(execution.status).toBe(200);
      expect(execution.body.execution_type.properties).toMatchObject({
        run_id: "STRING",
        workflow_name: "STRING",
        node_id: "STRING",
        display_name: "STRING",
        template_name: "STRING",
        phase: "STRING",
      });
      const artifact = await t.rest("GET", `${api}/artifact_types/${artifactType}`);
      expect(artifact.status).toBe(200);
      expect(artifact.body.artifact_type.properties).toMatchObject({ name: "STRING", run_id: "STRING", node_id: "STRING" });
    });

    it("records one execution per step with the node's properties, COMPLETE", () => {
      expect(executions.map((e) => prop(e, "display_name")).sort()).toEqual(["make", "use"]);
      for (const [displayName, template] of [
        ["make", "producer"],
        ["use", "consumer"],
      ]) {
        const node = run.byDisplayName(displayName);
        const execution = executionOf(displayName);
        expect(execution.last_known_state).toBe("COMPLETE");
        expect(execution.properties).toMatchObject({
          name: { string_value: displayName },
          run_id: { string_value: run.id },
          workflow_name: { string_value: run.workflow.metadata.name },
          node_id: { string_value: node.id },
          node_name: { string_value: node.name },
          display_name: { string_value: displayName },
          template_name: { string_value: template },
          phase: { string_value: "Succeeded" },
          started_at: { string_value: node.startedAt },
          finished_at: { string_value: node.finishedAt },
        });
      }
    });

    it("records the producer's outputs as artifacts stored on disk, with OUTPUT events", async () => {
      const make = run.byDisplayName("make");
      const view = await eventsOf(t, `executions/${executionOf("make").id}`);
      expect(view.events.map((e) => [e.type, e.path?.steps[0]?.key])).toEqual([
        ["OUTPUT", "data"],
        ["OUTPUT", "main-logs"],
      ]);
      for (const output of make.outputs!.artifacts!) {
        const event = view.events.find((e) => e.path?.steps[0]?.key === output.name)!;
        const artifact = view.artifacts[event.artifact_id];
        expect(artifact.uri).toMatch(/^file:\/\//);
        const file = fileURLToPath(artifact.uri);
        expect(file).toBe(join(t.dataDir, "artifacts", output.s3!.key));
        expect(existsSync(file)).toBe(true);
        expect(artifact.properties).toMatchObject({
          name: { string_value: output.name },
          run_id: { string_value: run.id },
          node_id: { string_value: make.id },
        });
      }
    });

    it("links the consumer to the producer's artifact with an INPUT event", async () => {
      const made = await eventsOf(t, `executions/${executionOf("make").id}`);
      const data = made.events.find((e) => e.path?.steps[0]?.key === "data")!.artifact_id;
      const used = await eventsOf(t, `executions/${executionOf("use").id}`);
      expect(used.events.map((e) => [e.type, e.path?.steps[0]?.key])).toEqual([
        ["INPUT", "incoming"],
        ["OUTPUT", "main-logs"],
      ]);
      expect(used.events[0].artifact_id).toBe(data);
      // Seen from the artifact: written by one step, read by the other.
      const byArtifact = await eventsOf(t, `artifacts/${data}`);
      expect(byArtifact.events.map((e) => [e.type, e.execution_id])).toEqual([
        ["OUTPUT", executionOf("make").id],
        ["INPUT", executionOf("use").id],
      ]);
    });
  });

  it("links parallel consumers of one artifact to the same artifact", async () => {
    const run = await runToEnd(
      t,
      workflow(
        [
          { name: "make", template: "producer" },
          {
            name: "use",
            template: "consumer",
            dependencies: ["make"],
            withItems: [1, 2],
            arguments: { artifacts: [{ name: "incoming", from: "{{tasks.make.outputs.artifacts.data}}" }] },
          },
        ],
        [
          shell("producer", "echo hello > /tmp/data.txt", { outputs: { artifacts: [{ name: "data", path: "/tmp/data.txt" }] } }),
          shell("consumer", "cat /in/data.txt", { inputs: { artifacts: [{ name: "incoming", path: "/in/data.txt" }] } }),
        ],
      ),
    );
    expect(run.status).toBe("Succeeded");
    const executions = await executionsOf(t, run.id);
    expect(executions.map((e) => prop(e, "display_name")).sort()).toEqual(["make", "use(0:1)", "use(1:2)"]);
    const make = executions.find((e) => prop(e, "display_name") === "make")!;
    const data = (await eventsOf(t, `executions/${make.id}`)).events.find((e) => e.path?.steps[0]?.key === "data")!.artifact_id;
    const readers = (await eventsOf(t, `artifacts/${data}`)).events.filter((e) => e.type === "INPUT").map((e) => e.execution_id);
    expect(readers.sort()).toEqual(executions.filter((e) => e !== make).map((e) => e.id).sort());
  });

  it("records a failed step FAILED, and nothing for steps that did not run", async () => {
    const run = await runToEnd(
      t,
      workflow(
        [
          { name: "bad", template: "fail" },
          { name: "never", template: "ok", dependencies: ["bad"] },
          { name: "skipped", template: "ok", when: "1 > 2" },
        ],
        [shell("fail", "echo oops && exit 3"), shell("ok", "true")],
      ),
    );
    expect(run.status).toBe("Failed");
    const executions = await executionsOf(t, run.id);
    expect(executions).toHaveLength(1);
    expect(executions[0].last_known_state).toBe("FAILED");
    expect(executions[0].properties).toMatchObject({
      display_name: { string_value: "bad" },
      node_id: { string_value: run.byDisplayName("bad").id },
      phase: { string_value: "Failed" },
      message: { string_value: "failed with exit code 3" },
    });
    const view = await eventsOf(t, `executions/${executions[0].id}`);
    expect(view.events.map((e) => [e.type, e.path?.steps[0]?.key])).toEqual([["OUTPUT", "main-logs"]]);
    expect(existsSync(fileURLToPath(view.artifacts[view.events[0].artifact_id].uri))).toBe(true);
  });
});

describe("step lineage that cannot be recorded", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it("does not fail the run", async () => {
    // A type of that name whose `phase` is an INT: the lineage cannot use it (types only grow).
    const taken = await t.rest("POST", `${api}/execution_types`, { name: stepType, properties: { phase: "INT" } });
    expect(taken.status).toBe(200);
    const run = await runToEnd(t, workflow([{ name: "one", template: "ok" }], [shell("ok", "echo fine")]));
    expect(run.status).toBe("Succeeded");
    expect(run.byDisplayName("one").phase).toBe("Succeeded");
    const listed = await t.rest("GET", `${api}/execution_types/${stepType}/executions`);
    expect(listed.body.executions ?? []).toEqual([]);
  });
});
