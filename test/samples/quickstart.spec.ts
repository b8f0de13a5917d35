// The README's quickstart, run exactly as written (only the server's address changes) against a
// real server: the run succeeds, its metrics and its report artifact are printed, and the last
// lines match the output the README shows.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../helpers/server.js";
import { between, fencedBlocks, readme, runBash } from "./readme.js";

const documentedUrl = "http://127.0.0.1:8888";
// The workflow's generated name ends with five random letters.
const normalize = (text: string) => text.replace(/\bdag-metrics-[a-z]{5}\b/g, "dag-metrics-xxxxx");

describe("the README quickstart", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    await t.close();
  });

  it("sits right after Two commands and shows shell commands for the default address", () => {
    const text = readme();
    const headings = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings[headings.indexOf("Two commands") + 1]).toBe("Quickstart");
    const commands = fencedBlocks(between(text, "quickstart"), "sh");
    expect(commands.length).toBeGreaterThan(0);
    expect(commands.join("\n")).toContain(documentedUrl);
  });

  it("uploads a sample, runs it, watches it finish, prints its metrics and an artifact", async () => {
    const text = readme();
    const script = fencedBlocks(between(text, "quickstart"), "sh").join("\n").replaceAll(documentedUrl, t.server.httpUrl);
    expect(script).not.toContain(":8888");

    const result = await runBash(script, 30_000);
    const report = `exit ${result.code}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}`;
    expect(result.code, report).toBe(0);

    const lines = result.stdout.trimEnd().split("\n");
    // The watch loop printed the run's progress and stopped once it had finished.
    const watched = lines.filter((line) => /^(Pending|Running|Succeeded|Failed|Error)\b/.test(line));
    expect(watched.at(-1), report).toMatch(/^Succeeded dag-metrics-[a-z]{5}=Succeeded produce=Succeeded transform=Succeeded evaluate=Succeeded$/);
    expect(lines, report).toContain("accuracy 0.9 PERCENTAGE");
    expect(lines, report).toContain("values-checked 10 RAW");
    expect(result.stdout.endsWith("9 of 10 values >= 3\naccuracy 0.900\n"), report).toBe(true);

    // The output the README shows is what it printed last.
    const shown = fencedBlocks(between(text, "quickstart-output"), "text");
    expect(shown).toHaveLength(1);
    const expected = normalize(shown[0]).trimEnd().split("\n");
    expect(normalize(lines.slice(-expected.length).join("\n"))).toBe(expected.join("\n"));

    // And the server agrees: one pipeline, one run with the parameter given, its metrics stored.
    const runs = (await t.rest("GET", "/apis/v1beta1/runs")).body.runs;
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ name: "quickstart", status: "Succeeded", pipeline_spec: { parameters: [{ name: "rows", value: "10" }] } });
    expect(runs[0].metrics.map((m: { name: string; number_value: number }) => [m.name, m.number_value]).sort()).toEqual([
      ["accuracy", 0.9],
      ["values-checked", 10],
    ]);
    const pipelines = (await t.rest("GET", "/apis/v1beta1/pipelines")).body.pipelines;
    expect(pipelines.map((p: { name: string }) => p.name)).toEqual(["dag-metrics"]);
  });
});
