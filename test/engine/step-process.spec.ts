// Local steps in their sandbox: isolation of writes, inputs, outputs, environment, logs, exit
// codes, and termination of whole process trees. Needs root, as the local engine does.
import { execFileSync, spawn } from "node:child_process";
import { createHash, randomInt } from "node:crypto";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runStep, sandboxAvailable, type StepResult, type StepSpec } from "../../src/engine/local/step-process.js";

let scratchRoot: string;
let hostDir: string;
let mountsBefore: string;
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");
const results: StepResult[] = [];

async function run(spec: Partial<StepSpec> & { argv: string[] }, options: { maxLogBytes?: number } = {}): Promise<StepResult> {
  const result = await runStep({ env: {}, ...spec }, { scratchRoot, ...options });
  results.push(result);
  return result;
}

/** Host processes whose command line contains `marker`. */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.replace(/\0/g, " ").includes(marker)) found.push(Number(entry));
  }
  return found;
}

/** Aborts once `count` processes with `marker` run (the step has started); returns when it aborted. */
async function abortWhenRunning(controller: AbortController, marker: string, count: number): Promise<number> {
  const deadline = Date.now() + 10_000;
  while ((await processesWith(`sleep ${marker}`)).length < count) {
    if (Date.now() > deadline) throw new Error("the step's processes did not start");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  controller.abort();
  return Date.now();
}

/** Children of this process that are zombies (exited, not reaped). */
async function zombieChildren(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const [state, ppid] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (state === "Z" && Number(ppid) === process.pid) found.push(Number(entry));
  }
  return found;
}

/** A `sleep` duration no other process uses, to find its processes by command line. */
const uniqueSleep = () => `60.${randomInt(100000, 999999)}`;

beforeAll(async () => {
  scratchRoot = await mkdtemp(join(tmpdir(), "pipewright-steps-"));
  hostDir = await mkdtemp(join(tmpdir(), "pipewright-step-host-"));
  mountsBefore = await readFile("/proc/self/mountinfo", "utf8");
});

afterAll(async () => {
  await Promise.all(results.map((result) => result.dispose()));
  await rm(scratchRoot, { recursive: true, force: true });
  await rm(hostDir, { recursive: true, force: true });
});

describe("the step sandbox", () => {
  it("is available on this machine (root, util-linux, overlayfs)", async () => {
    const available = await sandboxAvailable();
    expect(available, available.why).toMatchObject({ ok: true });
    expect(available.how).toContain("overlayfs");
  });

  it("keeps a step's writes to /tmp and / off the host and collects them", async () => {
    expect(existsSync("/tmp/outputs/data/data")).toBe(false);
    expect(existsSync("/mlpipeline-metrics.json")).toBe(false);
    const result = await run({
      argv: ["sh", "-c", `mkdir -p /tmp/outputs/data && echo hello > /tmp/outputs/data/data && echo '{"metrics":[]}' > /mlpipeline-metrics.json`],
      outputPaths: ["/tmp/outputs/data/data", "/mlpipeline-metrics.json", "/tmp/outputs/missing"],
    });
    expect(result.exitCode).toBe(0);
    expect(result.killedBy).toBeUndefined();
    expect([...result.outputs.keys()]).toEqual(["/tmp/outputs/data/data", "/mlpipeline-metrics.json"]);
    const data = result.outputs.get("/tmp/outputs/data/data")!;
    expect(data.kind).toBe("file");
    expect(data.hostPath.endsWith("/data")).toBe(true);
    expect(await readFile(data.hostPath, "utf8")).toBe("hello\n");
    const metrics = result.outputs.get("/mlpipeline-metrics.json")!;
    expect(metrics.hostPath.endsWith("/mlpipeline-metrics.json")).toBe(true);
    expect(await readFile(metrics.hostPath, "utf8")).toBe('{"metrics":[]}\n');
    expect(existsSync("/tmp/outputs/data/data")).toBe(false);
    expect(existsSync("/mlpipeline-metrics.json")).toBe(false);
  });

  it("runs two steps writing the same paths at once, each collecting its own", async () => {
    const script = [
      "mkdir -p /tmp/outputs/data",
      `printf %s "$VALUE" > /tmp/outputs/data/data`,
      `printf '{"v":"%s"}' "$VALUE" > /mlpipeline-metrics.json`,
      "sleep 0.3",
      `[ "$(cat /tmp/outputs/data/data)" = "$VALUE" ] || exit 9`,
    ].join(" && ");
    const step = (value: string) =>
      run({ argv: ["sh", "-c", script], env: { VALUE: value }, outputPaths: ["/tmp/outputs/data/data", "/mlpipeline-metrics.json"] });
    const [a, b] = await Promise.all([step("first"), step("second")]);
    for (const [result, value] of [[a, "first"], [b, "second"]] as const) {
      expect(result.exitCode).toBe(0);
      expect(await readFile(result.outputs.get("/tmp/outputs/data/data")!.hostPath, "utf8")).toBe(value);
      expect(await readFile(result.outputs.get("/mlpipeline-metrics.json")!.hostPath, "utf8")).toBe(`{"v":"${value}"}`);
    }
    expect(existsSync("/tmp/outputs/data/data")).toBe(false);
    expect(existsSync("/mlpipeline-metrics.json")).toBe(false);
  });

  it("leaves the host's files alone: changes, deletions and new files stay in the step's view", async () => {
    await writeFile(join(hostDir, "kept"), "original\n");
    await writeFile(join(hostDir, "victim"), "still here\n");
    const result = await run({
      argv: ["sh", "-c", `cat kept && echo changed > kept && rm victim && echo new > fresh`],
      workingDir: hostDir,
      outputPaths: [join(hostDir, "kept"), join(hostDir, "victim"), join(hostDir, "fresh")],
    });
    expect(result.exitCode).toBe(0);
    expect(text(result.stdout)).toBe("original\n");
    expect(await readFile(join(hostDir, "kept"), "utf8")).toBe("original\n");
    expect(await readFile(join(hostDir, "victim"), "utf8")).toBe("still here\n");
    expect(existsSync(join(hostDir, "fresh"))).toBe(false);
    expect(await readFile(result.outputs.get(join(hostDir, "kept"))!.hostPath, "utf8")).toBe("changed\n");
    expect(result.outputs.has(join(hostDir, "victim"))).toBe(false);
    expect(await readFile(result.outputs.get(join(hostDir, "fresh"))!.hostPath, "utf8")).toBe("new\n");
  });

  it("collects a host file the step did not touch, from the lower layer", async () => {
    await writeFile(join(hostDir, "untouched"), "as on the host\n");
    const result = await run({ argv: ["true"], outputPaths: [join(hostDir, "untouched")] });
    expect(await readFile(result.outputs.get(join(hostDir, "untouched"))!.hostPath, "utf8")).toBe("as on the host\n");
  });

  it("hides the scratch root (other steps' files) and shows only the step's own processes", async () => {
    const result = await run({ argv: ["sh", "-c", `ls -A "$ROOT"; echo ---; ls /proc | grep -c '^[0-9]'; cat /proc/1/cmdline | tr '\\0' ' '`], env: { ROOT: scratchRoot } });
    const [listing, rest] = text(result.stdout).split("---\n");
    expect(listing).toBe("");
    const [count, init] = rest.split("\n");
    expect(Number(count)).toBeLessThan(10);
    expect(init).toContain("init.sh");
  });

  it("passes exactly the environment given, over PATH, HOME and LANG", async () => {
    process.env.PIPEWRIGHT_TEST_SERVER_ONLY = "must not leak";
    try {
      const result = await run({ argv: ["env"], env: { FOO: "bar baz", EMPTY: "", QUOTE: `it's "quoted" $HOME` } });
      const lines = text(result.stdout).trimEnd().split("\n");
      const env = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
      expect(Object.keys(env).sort()).toEqual(["EMPTY", "FOO", "HOME", "LANG", "PATH", "QUOTE"]);
      expect(env).toMatchObject({ FOO: "bar baz", EMPTY: "", QUOTE: `it's "quoted" $HOME`, PATH: process.env.PATH });
    } finally {
      delete process.env.PIPEWRIGHT_TEST_SERVER_ONLY;
    }
    const overridden = await run({ argv: ["sh", "-c", "echo $PATH $HOME"], env: { PATH: "/usr/bin:/bin", HOME: "/home/step" } });
    expect(text(overridden.stdout)).toBe("/usr/bin:/bin /home/step\n");
  });

  it("runs in the working directory, creating it when missing", async () => {
    const result = await run({ argv: ["pwd"], workingDir: "/tmp/pipewright-wd/deep" });
    expect(text(result.stdout)).toBe("/tmp/pipewright-wd/deep\n");
    expect(existsSync("/tmp/pipewright-wd")).toBe(false);
    const root = await run({ argv: ["pwd"] });
    expect(text(root.stdout)).toBe("/\n");
  });

  it("places input files, with their modes and exact bytes, before the step starts", async () => {
    const binary = Uint8Array.from({ length: 256 }, (_, i) => i);
    const result = await run({
      argv: ["/argo/staging/script"],
      files: [
        { path: "/tmp/inputs/message/data", content: "hello" },
        { path: "/argo/staging/script", content: `#!/bin/sh\necho "script says $(cat /tmp/inputs/message/data)"\nstat -c %a /argo/staging/script /tmp/inputs/message/data\nsha256sum < /tmp/bin\n`, mode: 0o755 },
        { path: "/tmp/bin", content: binary },
      ],
    });
    expect(result.exitCode).toBe(0);
    const [said, scriptMode, dataMode, sum] = text(result.stdout).trimEnd().split("\n");
    expect(said).toBe("script says hello");
    expect([scriptMode, dataMode]).toEqual(["755", "644"]);
    expect(sum.split(" ")[0]).toBe(createHash("sha256").update(binary).digest("hex"));
    expect(existsSync("/argo")).toBe(false);
    expect(existsSync("/tmp/inputs/message")).toBe(false);
  });

  it("copies input folders in; the step's changes to them stay in its view", async () => {
    const folder = join(hostDir, "input-folder");
    await mkdir(join(folder, "sub"), { recursive: true });
    await writeFile(join(folder, "a.txt"), "A\n");
    await writeFile(join(folder, "sub", "b.txt"), "B\n");
    const result = await run({
      argv: ["sh", "-c", "cat /tmp/inputs/folder/a.txt /tmp/inputs/folder/sub/b.txt && echo more >> /tmp/inputs/folder/a.txt"],
      directories: [{ path: "/tmp/inputs/folder", from: folder }],
    });
    expect(result.exitCode).toBe(0);
    expect(text(result.stdout)).toBe("A\nB\n");
    expect(await readFile(join(folder, "a.txt"), "utf8")).toBe("A\n");
  });

  it("collects a folder output with its tree", async () => {
    const result = await run({
      argv: ["sh", "-c", "mkdir -p /tmp/outputs/model/sub && echo a > /tmp/outputs/model/a.txt && echo b > /tmp/outputs/model/sub/b.txt && ln -s a.txt /tmp/outputs/model/link"],
      outputPaths: ["/tmp/outputs/model/"],
    });
    const model = result.outputs.get("/tmp/outputs/model/")!;
    expect(model).toMatchObject({ path: "/tmp/outputs/model", kind: "directory" });
    expect(model.hostPath.endsWith("/model")).toBe(true);
    expect((await readdir(model.hostPath)).sort()).toEqual(["a.txt", "link", "sub"]);
    expect(await readFile(join(model.hostPath, "sub", "b.txt"), "utf8")).toBe("b\n");
    expect(await readFile(join(model.hostPath, "link"), "utf8")).toBe("a\n");
  });

  it("reports exit codes, including death by a signal", async () => {
    expect((await run({ argv: ["sh", "-c", "exit 3"] })).exitCode).toBe(3);
    expect((await run({ argv: ["sh", "-c", "kill -KILL $$"] })).exitCode).toBe(137);
    expect((await run({ argv: ["false"], outputPaths: ["/etc/hostname"] })).outputs.size).toBe(1);
  });

  it("answers a missing executable with 127 and a message in the log", async () => {
    const missing = await run({ argv: ["pipewright-no-such-binary", "--flag"] });
    expect(missing.exitCode).toBe(127);
    expect(text(missing.log)).toContain("pipewright-no-such-binary: executable file not found in PATH");
    expect(text(missing.stdout)).toBe("");
    const absolute = await run({ argv: ["/no/such/program"] });
    expect(absolute.exitCode).toBe(127);
    expect(text(absolute.log)).toContain("/no/such/program: executable file not found");
  });

  it("keeps stdout and stderr interleaved in the log, and stdout apart", async () => {
    const result = await run({ argv: ["sh", "-c", "echo out1; sleep 0.05; echo err1 >&2; sleep 0.05; echo out2; sleep 0.05; echo err2 >&2"] });
    expect(text(result.log)).toBe("out1\nerr1\nout2\nerr2\n");
    expect(text(result.stdout)).toBe("out1\nout2\n");
  });

  it("caps a large log with a note", async () => {
    const small = await run({ argv: ["sh", "-c", "head -c 3000000 /dev/zero | tr '\\0' a"] }, { maxLogBytes: 1_000_000 });
    expect(small.exitCode).toBe(0);
    const log = text(small.log);
    expect(log.startsWith("a".repeat(1_000_000))).toBe(true);
    expect(log.slice(1_000_000)).toBe("\npipewright: log truncated at 1000000 bytes; 2000000 more bytes were dropped\n");
    const large = await run({ argv: ["head", "-c", "20000000", "/dev/zero"] });
    expect(large.log.length).toBeGreaterThan(16 * 1024 * 1024);
    expect(large.log.length).toBeLessThan(16 * 1024 * 1024 + 200);
  });

  it("kills a step and all its children on timeout, within 2 s", async () => {
    const marker = uniqueSleep();
    const started = Date.now();
    const result = await run({ argv: ["sh", "-c", `sleep ${marker} & sleep ${marker}`], timeoutMs: 300 });
    expect(result.killedBy).toBe("timeout");
    expect(result.exitCode).toBeNull();
    expect(Date.now() - started).toBeLessThan(300 + 2000);
    expect(await processesWith(marker)).toEqual([]);
    expect(await zombieChildren()).toEqual([]);
  });

  it("kills processes that ignore SIGTERM or left the session, a grace second after the SIGTERM", async () => {
    const marker = uniqueSleep();
    const controller = new AbortController();
    const running = run({
      argv: ["sh", "-c", `trap '' TERM; setsid sleep ${marker} & nohup sleep ${marker} >/dev/null 2>&1 & sleep ${marker}`],
      signal: controller.signal,
    });
    const abortedAt = await abortWhenRunning(controller, marker, 3);
    const result = await running;
    const elapsed = Date.now() - abortedAt;
    expect(result.killedBy).toBe("abort");
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(elapsed).toBeLessThan(2000);
    expect(await processesWith(marker)).toEqual([]);
    expect(await zombieChildren()).toEqual([]);
  });

  it("terminates on abort within 2 s, and does not start when already aborted", async () => {
    const marker = uniqueSleep();
    const controller = new AbortController();
    const running = run({ argv: ["sh", "-c", `sleep ${marker} & sleep ${marker} & wait`], signal: controller.signal, outputPaths: ["/etc/hostname"] });
    const abortedAt = await abortWhenRunning(controller, marker, 2);
    const result = await running;
    expect(result.killedBy).toBe("abort");
    expect(Date.now() - abortedAt).toBeLessThan(2000);
    expect(result.outputs.size).toBe(0);
    expect(await processesWith(marker)).toEqual([]);

    const early = await run({ argv: ["sh", "-c", `sleep ${marker}`], signal: AbortSignal.abort() });
    expect(early).toMatchObject({ killedBy: "abort", exitCode: null });
  });

  it("ends what a step left running in the background when its command exits", async () => {
    const marker = uniqueSleep();
    const started = Date.now();
    const result = await run({ argv: ["sh", "-c", `sleep ${marker} & echo started`] });
    expect(result.exitCode).toBe(0);
    expect(text(result.log)).toBe("started\n");
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await processesWith(marker)).toEqual([]);
  });

  it("rejects what it cannot run with a clear error", async () => {
    await expect(run({ argv: [] })).rejects.toThrow("needs a command");
    await expect(run({ argv: ["true"], workingDir: "relative" })).rejects.toThrow("must be absolute");
    await expect(run({ argv: ["true"], outputPaths: ["/"] })).rejects.toThrow("cannot output /");
    await expect(run({ argv: ["true"], env: { "A=B": "x" } })).rejects.toThrow("invalid environment variable");
    await expect(run({ argv: ["true"], directories: [{ path: "/in", from: join(hostDir, "absent") }] })).rejects.toThrow("not a directory");
    await expect(runStep({ argv: ["true"], env: {} }, { scratchRoot: join(scratchRoot, "a,b") })).rejects.toThrow("overlayfs cannot take");
  });

  it("removes its scratch space on dispose", async () => {
    const result = await runStep({ argv: ["sh", "-c", "echo x > /tmp/x"], env: {}, outputPaths: ["/tmp/x"] }, { scratchRoot });
    const hostPath = result.outputs.get("/tmp/x")!.hostPath;
    expect(existsSync(hostPath)).toBe(true);
    await result.dispose();
    expect(existsSync(hostPath)).toBe(false);
    expect((await readdir(scratchRoot)).filter((name) => hostPath.includes(name))).toEqual([]);
  });

  it("measures its overhead against a plain spawn of true", async () => {
    const plain = () => new Promise<void>((resolve) => spawn("true", { stdio: "ignore" }).on("close", () => resolve()));
    const time = async (fn: () => Promise<unknown>, n: number) => {
      const times: number[] = [];
      for (let i = 0; i < n; i++) {
        const started = performance.now();
        await fn();
        times.push(performance.now() - started);
      }
      return times.sort((a, b) => a - b)[Math.floor(n / 2)];
    };
    const spawnMs = await time(plain, 10);
    const stepMs = await time(async () => (await runStep({ argv: ["true"], env: {} }, { scratchRoot })).dispose(), 10);
    console.log(`local step overhead: median ${stepMs.toFixed(1)} ms per step (run + dispose) vs ${spawnMs.toFixed(1)} ms for a plain spawn of true`);
    expect(stepMs).toBeLessThan(1000);
  });

  it("leaves no mounts on the host", async () => {
    const mounts = await readFile("/proc/self/mountinfo", "utf8");
    expect(mounts).not.toContain(scratchRoot);
    const overlays = (text: string) => text.split("\n").filter((line) => line.includes(" - overlay ")).length;
    expect(overlays(mounts)).toBe(overlays(mountsBefore));
  });

  it("says clearly that it needs root", async (context) => {
    const module = resolve("src/engine/local/step-process.ts");
    const asNobody = ["--reuid=65534", "--regid=65534", "--clear-groups", "--"];
    try {
      execFileSync("setpriv", [...asNobody, "test", "-r", module]);
    } catch {
      context.skip(); // the checkout is not readable by nobody
    }
    const child = join(hostDir, "as-nobody.mjs");
    await writeFile(
      child,
      `const { runStep, sandboxAvailable } = await import(${JSON.stringify(module)});
console.log(JSON.stringify(await sandboxAvailable()));
await runStep({ argv: ["true"], env: {} }, { scratchRoot: "/tmp/pipewright-nobody" }).catch((err) => console.log(err.message));
`,
    );
    await chmod(hostDir, 0o755);
    const tsx = resolve("node_modules/tsx/dist/esm/index.mjs");
    const output = execFileSync("setpriv", [...asNobody, process.execPath, "--import", tsx, child], { encoding: "utf8", env: { ...process.env, HOME: "/tmp" } });
    const [availability, message] = output.trimEnd().split("\n");
    expect(JSON.parse(availability)).toMatchObject({ ok: false, why: expect.stringContaining("need root") });
    expect(message).toMatch(/^local steps cannot run here: .*need root/);
    expect(existsSync("/tmp/pipewright-nobody")).toBe(false);
  });
});
