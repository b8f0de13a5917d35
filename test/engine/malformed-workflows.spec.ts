// Manifests that parse but cannot run: the run is created and ends with an Error naming the
// problem; the server keeps serving.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { runToEnd } from "./helpers.js";

const workflow = (spec: unknown, metadata: unknown = { generateName: "bad-" }) => ({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Workflow",
  metadata,
  spec,
});
const trueStep = { name: "m", container: { command: ["true"] } };

describe("malformed workflows on the local engine", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ["no spec", workflow(undefined), /no spec/],
    ["no entrypoint", workflow({ templates: [] }), /entrypoint/],
    ["templates that are not a list", workflow({ entrypoint: "m", templates: "m" }), /templates must be a list/],
    ["steps that are not groups", workflow({ entrypoint: "m", templates: [{ name: "m", steps: "x" }] }), /steps must be a list of lists/],
    ["dependencies that are not a list", workflow({ entrypoint: "m", templates: [{ name: "m", dag: { tasks: [{ name: "a", template: "m", dependencies: "a" }] } }] }), /dependencies/],
    ["a deadline that is not a number", workflow({ entrypoint: "m", activeDeadlineSeconds: "soon", templates: [trueStep] }), /activeDeadlineSeconds/],
    ["a parallelism below 1", workflow({ entrypoint: "m", parallelism: 0, templates: [trueStep] }), /parallelism/],
    ["a retry limit that is not a number", workflow({ entrypoint: "m", templates: [{ ...trueStep, retryStrategy: { limit: "x" } }] }), /retryStrategy/],
    ["an entrypoint that does not exist", workflow({ entrypoint: "nope", templates: [trueStep] }), /template "nope" is not defined/],
  ])("ends a run with %s as Error", async (_what, manifest, message) => {
    const run = await runToEnd(t, manifest);
    expect(run.status).toBe("Error");
    expect(`${run.workflow.status.message ?? ""} ${run.nodes.map((n) => n.message).join(" ")}`).toMatch(message);
  });

  it("stops a recursion that never ends", async () => {
    const run = await runToEnd(t, workflow({ entrypoint: "m", templates: [{ name: "m", dag: { tasks: [{ name: "again", template: "m" }] } }] }));
    expect(run.status).not.toBe("Succeeded");
    expect(run.nodes.some((n) => /nest more than 100 levels/.test(n.message ?? ""))).toBe(true);
  });
});
