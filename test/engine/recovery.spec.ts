// After a crash, runs that were in flight do not stay Running: the next start ends them with an
// Error that says why, and their step processes died with the server.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";

const repo = new URL("../..", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "pipewright-recovery-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function start(): Promise<{ child: ChildProcess; url: string }> {
  // One process (no tsx wrapper), so that SIGKILL kills the server itself.
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
    cwd: repo,
    env: { ...process.env, DATA_DIR: dataDir, PORT: "0", GRPC_PORT: "0", LOG_LEVEL: "info" },
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const entry = JSON.parse(line) as { msg?: string; http?: number };
      if (entry.msg === "pipewright ready") resolve({ child, url: `http://127.0.0.1:${entry.http}` });
    });
    child.once("exit", (code) => reject(new Error(`exited with ${code}`)));
  });
}

/** Processes whose argv[0] is `name`. */
function processesNamed(name: string): string[] {
  return readdirSync("/proc").filter((pid) => {
    try {
      return /^\d+$/.test(pid) && readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] === name;
    } catch {
      return false;
    }
  });
}

const json = async (url: string, init?: RequestInit) => (await fetch(url, init)).json();
const marker = `pipewright-recovery-${process.pid}`;

describe("restart recovery", () => {
  it("ends a run that was running when the server was killed with an Error", async () => {
    const first = await start();
    const manifest = {
      apiVersion: "argoproj.io/v1alpha1",
      kind: "Workflow",
      metadata: { generateName: "crash-" },
      spec: { entrypoint: "main", templates: [{ name: "main", container: { image: "alpine", command: ["sh", "-c", `exec -a ${marker} sleep 60`] } }] },
    };
    const created = await json(`${first.url}/apis/v1beta1/runs`, {
      method: "POST",
      body: JSON.stringify({ name: "crash", pipeline_spec: { workflow_manifest: JSON.stringify(manifest) } }),
    });
    const id = created.run.id as string;
    for (let i = 0; i < 100 && (await json(`${first.url}/apis/v1beta1/runs/${id}`)).run.status !== "Running"; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    first.child.kill("SIGKILL");
    await new Promise((resolve) => first.child.once("exit", resolve));

    const second = await start();
    try {
      const run = await json(`${second.url}/apis/v1beta1/runs/${id}`);
      expect(run.run.status).toBe("Error");
      expect(run.run.finished_at).toBeDefined();
      const workflow = JSON.parse(run.pipeline_runtime.workflow_manifest);
      expect(workflow.status.message).toMatch(/server stopped/);
      expect(Object.values(workflow.status.nodes).every((n) => (n as { phase: string }).phase === "Error")).toBe(true);
      expect(processesNamed(marker), "step processes die with the server").toEqual([]);
    } finally {
      second.child.kill("SIGTERM");
      await new Promise((resolve) => second.child.once("exit", resolve));
    }
  }, 60_000);
});
