// Real time, real server: a 2-second periodic job and a every-3-seconds cron job fire runs
// through the API, and those runs execute.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";

const apis = "/apis/v1beta1";
const manifest = JSON.stringify({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Workflow",
  metadata: { generateName: "tick-" },
  spec: {
    entrypoint: "main",
    arguments: { parameters: [{ name: "when" }, { name: "index" }] },
    templates: [
      {
        name: "main",
        inputs: { parameters: [{ name: "when" }, { name: "index" }] },
        container: { image: "alpine", command: ["sh", "-c", "echo {{inputs.parameters.index}} at {{inputs.parameters.when}}"] },
      },
    ],
  },
});

describe("recurring jobs in real time", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it("fire periodic and cron jobs whose runs execute", async () => {
    const parameters = [
      { name: "when", value: "[[ScheduledTime]]" },
      { name: "index", value: "[[Index]]" },
    ];
    const periodic = (
      await t.rest("POST", `${apis}/jobs`, {
        name: "every-two",
        pipeline_spec: { workflow_manifest: manifest, parameters },
        trigger: { periodic_schedule: { interval_second: "2" } },
        max_concurrency: "5",
      })
    ).body;
    const cron = (
      await t.rest("POST", `${apis}/jobs`, {
        name: "cron-three",
        pipeline_spec: { workflow_manifest: manifest, parameters },
        trigger: { cron_schedule: { cron: "*/3 * * * * *" } },
        max_concurrency: "5",
      })
    ).body;
    expect(periodic.status).toBe("Enabled");
    await new Promise((resolve) => setTimeout(resolve, 7_500));
    await t.rest("POST", `${apis}/jobs/${periodic.id}/disable`);
    await t.rest("POST", `${apis}/jobs/${cron.id}/disable`);

    for (const [job, atLeast] of [
      [periodic, 3],
      [cron, 2],
    ] as const) {
      const runs = (await t.rest("GET", `${apis}/runs?resource_reference_key.type=JOB&resource_reference_key.id=${job.id}&sort_by=scheduled_at`)).body.runs;
      expect(runs.length).toBeGreaterThanOrEqual(atLeast);
      expect(runs.length).toBeLessThanOrEqual(atLeast + 1);
      runs.forEach((run: { name: string; resource_references: unknown; scheduled_at: string }, i: number) => {
        expect(run.name).toMatch(new RegExp(`^${job.name}-${i + 1}-\\d+$`));
        expect(run.resource_references).toEqual([
          { key: { type: "EXPERIMENT", id: job.resource_references[0].key.id }, relationship: "OWNER" },
          { key: { type: "JOB", id: job.id }, relationship: "CREATOR" },
        ]);
        expect(Date.parse(run.scheduled_at) % 1000).toBe(0);
      });
      const slots = runs.map((r: { scheduled_at: string }) => Date.parse(r.scheduled_at));
      const gaps = slots.slice(1).map((s: number, i: number) => s - slots[i]);
      expect(new Set(gaps)).toEqual(new Set([job === periodic ? 2000 : 3000]));
      for (const run of runs) {
        let status = "";
        for (let i = 0; i < 100 && !["Succeeded", "Failed", "Error"].includes(status); i++) {
          status = (await t.rest("GET", `${apis}/runs/${run.id}`)).body.run.status;
          if (status !== "Succeeded") await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(status).toBe("Succeeded");
      }
    }
  }, 30_000);
});
