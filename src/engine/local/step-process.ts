// Runs one workflow step (an Argo `container` or `script` template, already substituted) as local
// processes in a sandbox of its own (step-sandbox.ts): its own writable view of the host's
// filesystem, its own PID namespace, a log of its stdout and stderr, its declared outputs copied
// out, and termination of the whole process tree on abort or timeout.
//
// Environment: the step gets exactly `spec.env` over three basics taken from the server:
// PATH (so that the host's binaries resolve as they do for the server; /usr/local/sbin:… when the
// server has none), HOME (else /root) and LANG (else C.UTF-8). Nothing else of the server's
// environment is passed.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, stat, symlink, writeFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { CappedLog, DEFAULT_MAX_LOG_BYTES } from "./step-log.js";
import { hostLayers } from "./step-mounts.js";
import { checkScratchPath, initScript, sandboxAvailable, sandboxCommand, shellQuote, SYSTEM_PATH } from "./step-sandbox.js";

export { sandboxAvailable } from "./step-sandbox.js";

export interface StepFile {
  /** Absolute path inside the step's view. */
  path: string;
  content: Uint8Array | string;
  /** Permission bits; 0o644 when absent. */
  mode?: number;
}

export interface StepSpec {
  /** Command and arguments, already substituted; argv[0] is looked up in the step's PATH inside its view. */
  argv: string[];
  /** The step's environment, over PATH, HOME and LANG from the server. */
  env: Record<string, string>;
  /** Absolute; created when missing; `/` when absent. */
  workingDir?: string;
  /** Written into the view before the step starts. */
  files?: StepFile[];
  /** Host folders copied into the view (at `path`) before the step starts. */
  directories?: { path: string; from: string }[];
  /** Absolute paths inside the view to collect after a normal exit (a file or a folder; may be missing). */
  outputPaths?: string[];
  timeoutMs?: number;
  /** Aborting terminates the step: SIGTERM to all its processes, SIGKILL a grace period later. */
  signal?: AbortSignal;
}

export interface StepOutput {
  path: string;
  /** A copy on the host, named after the path's basename, valid until dispose(). */
  hostPath: string;
  kind: "file" | "directory";
}

export interface StepResult {
  /** The command's exit status (128 + n when a signal ended it; 127 when it was not found); null when terminated. */
  exitCode: number | null;
  killedBy?: "timeout" | "abort";
  /**
   * stdout and stderr interleaved as they were read from their two pipes (as a container runtime's
   * log has them: writes close together on different streams may swap); our own notes, if any, at
   * the end. Capped at maxLogBytes, with a note saying so.
   */
  log: Uint8Array;
  /** stdout alone (Argo's `outputs.result` of a script template), capped at maxLogBytes likewise. */
  stdout: Uint8Array;
  /** Keyed by the output path as given: those that existed when the step ended normally. */
  outputs: Map<string, StepOutput>;
  /** Removes the step's scratch space (its filesystem changes and the collected outputs). */
  dispose(): Promise<void>;
}

export interface RunStepOptions {
  /** Where steps' scratch directories go; on a filesystem that can hold an overlayfs upper layer. */
  scratchRoot: string;
  maxLogBytes?: number;
  /** Between SIGTERM and SIGKILL on termination; 1000 ms by default. */
  killGraceMs?: number;
}

const DEFAULT_PATH = SYSTEM_PATH;
const MAX_DIAGNOSTICS = 64 * 1024;

/** The step's whole environment: PATH, HOME and LANG from the server, then `env`. */
export function stepEnvironment(env: Record<string, string>): Record<string, string> {
  const result: Record<string, string> = {
    PATH: process.env.PATH || DEFAULT_PATH,
    HOME: process.env.HOME || "/root",
    LANG: process.env.LANG || "C.UTF-8",
  };
  for (const [key, value] of Object.entries(env)) {
    if (key === "" || key.includes("=") || key.includes("\0") || value.includes("\0")) {
      throw new Error(`invalid environment variable for a local step: ${JSON.stringify(key)}`);
    }
    result[key] = value;
  }
  return result;
}

function viewPath(path: string, what: string): string {
  if (!posix.isAbsolute(path)) throw new Error(`${what} ${JSON.stringify(path)} of a local step must be absolute`);
  const normalized = posix.normalize(path);
  return normalized.length > 1 && normalized.endsWith("/") ? normalized.slice(0, -1) : normalized;
}

export async function runStep(spec: StepSpec, options: RunStepOptions): Promise<StepResult> {
  if (spec.argv.length === 0 || spec.argv[0] === "") throw new Error("a local step needs a command");
  const env = stepEnvironment(spec.env);
  const workingDir = viewPath(spec.workingDir ?? "/", "the working directory");
  const files = (spec.files ?? []).map((file) => ({ ...file, path: viewPath(file.path, "the input file") }));
  const directories = (spec.directories ?? []).map((d) => ({ ...d, path: viewPath(d.path, "the input folder") }));
  const outputPaths = spec.outputPaths ?? [];
  const outputs = outputPaths.map((path) => {
    const normalized = viewPath(path, "the output path");
    if (normalized === "/") throw new Error("a local step cannot output /");
    return normalized;
  });
  for (const directory of directories) {
    const info = await stat(directory.from).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`the input folder ${directory.from} of a local step is not a directory on the host`);
  }

  const available = await sandboxAvailable();
  if (!available.ok) throw new Error(`local steps cannot run here: ${available.why}`);

  await mkdir(options.scratchRoot, { recursive: true });
  const scratchRoot = await realpath(options.scratchRoot);
  checkScratchPath(scratchRoot);
  const dir = await mkdtemp(join(scratchRoot, "step-"));
  const dispose = () => rm(dir, { recursive: true, force: true, maxRetries: 3 });
  try {
    const layers = await hostLayers([scratchRoot]);
    await prepareScratch(dir, layers.length, outputs.length);
    const staging: string[] = [];
    await Promise.all(files.map((file, i) => writeFile(join(dir, "in", `f${i}`), file.content)));
    files.forEach((file, i) => {
      const mode = ((file.mode ?? 0o644) & 0o7777).toString(8);
      staging.push(`install -D -m ${mode} -- /proc/self/fd/5/f${i} ${shellQuote(file.path)}`);
    });
    await Promise.all(directories.map((_, i) => mkdir(join(dir, "in", `d${i}`))));
    directories.forEach((directory, i) => {
      const target = shellQuote(directory.path);
      staging.push(`mkdir -p -- ${target}`, `cp -a -- /proc/self/fd/5/d${i}/. ${target}/`);
    });
    const initPath = join(dir, "init.sh");
    await writeFile(
      initPath,
      initScript({
        scratch: dir,
        scratchRoot,
        layers,
        staging: staging.length > 0 ? ["set -e", ...staging].join("\n") : "",
        directoryBinds: directories.map((directory, i) => ({ from: directory.from, name: `d${i}` })),
        workingDir,
        stepPath: env.PATH ?? "",
        outputs,
        environment: Object.entries(env).map(([key, value]) => `${key}=${value}`),
        argv: spec.argv,
      }),
    );
    const command = await sandboxCommand(initPath);
    const run = await supervise(command.file, command.args, {
      maxLogBytes: options.maxLogBytes ?? DEFAULT_MAX_LOG_BYTES,
      killGraceMs: options.killGraceMs ?? 1000,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
    });
    const collected = new Map<string, StepOutput>();
    for (const [index, kind] of run.outputs) {
      const path = outputs[index];
      collected.set(outputPaths[index], { path, hostPath: join(dir, "out", String(index), posix.basename(path)), kind });
    }
    return { exitCode: run.exitCode, killedBy: run.killedBy, log: run.log, stdout: run.stdout, outputs: collected, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

async function prepareScratch(dir: string, layerCount: number, outputCount: number): Promise<void> {
  const dirs = ["upper", "work", "root", "in", "out", "dev/pts", "dev/shm"];
  for (let i = 0; i < layerCount; i++) dirs.push(`layers/${i}/upper`, `layers/${i}/work`);
  for (let i = 0; i < outputCount; i++) dirs.push(`out/${i}`);
  await Promise.all(dirs.map((sub) => mkdir(join(dir, sub), { recursive: true })));
  const links: [string, string][] = [
    ["/proc/self/fd", "fd"],
    ["/proc/self/fd/0", "stdin"],
    ["/proc/self/fd/1", "stdout"],
    ["/proc/self/fd/2", "stderr"],
    ["pts/ptmx", "ptmx"],
  ];
  await Promise.all(links.map(([target, name]) => symlink(target, join(dir, "dev", name))));
}

interface Supervised {
  exitCode: number | null;
  killedBy?: "timeout" | "abort";
  log: Uint8Array;
  stdout: Uint8Array;
  outputs: [number, "file" | "directory"][];
}

/** Whether `pid` is still a child of `parent` (so that a signal cannot hit a recycled pid). */
function isChildOf(pid: number, parent: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === parent;
  } catch {
    return false;
  }
}

/** Runs the sandbox command, reads its log and its reports on fd 3, and terminates it when told. */
function supervise(
  file: string,
  args: string[],
  limits: { maxLogBytes: number; killGraceMs: number; timeoutMs?: number; signal?: AbortSignal },
): Promise<Supervised> {
  return new Promise((resolve, reject) => {
    const log = new CappedLog(limits.maxLogBytes);
    const stdout = new CappedLog(limits.maxLogBytes);
    if (limits.signal?.aborted) {
      resolve({ exitCode: null, killedBy: "abort", log: log.bytes(), stdout: stdout.bytes(), outputs: [] });
      return;
    }
    const child = spawn(file, args, { env: { PATH: SYSTEM_PATH }, stdio: ["ignore", "pipe", "pipe", "pipe", "pipe"], detached: true });
    let diagnostics = "";
    let initPid: number | undefined;
    let ready = false;
    let done = false;
    let reported: number | undefined;
    let killedBy: "timeout" | "abort" | undefined;
    let closed = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const outputs: [number, "file" | "directory"][] = [];

    const hardKill = () => {
      if (closed || child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const terminate = (why: "timeout" | "abort") => {
      if (closed || killedBy) return;
      killedBy = why;
      if (ready && initPid !== undefined && child.pid !== undefined && isChildOf(initPid, child.pid)) {
        try {
          process.kill(initPid, "SIGTERM");
        } catch {
          // already gone
        }
        graceTimer = setTimeout(hardKill, limits.killGraceMs);
      } else {
        hardKill();
      }
    };
    const onAbort = () => terminate("abort");
    limits.signal?.addEventListener("abort", onAbort, { once: true });
    const timeoutTimer = limits.timeoutMs !== undefined ? setTimeout(() => terminate("timeout"), limits.timeoutMs) : undefined;

    child.stdout?.on("data", (chunk: Buffer) => {
      log.push(chunk);
      stdout.push(chunk);
    });
    (child.stdio[4] as NodeJS.ReadableStream).on("data", (chunk: Buffer) => log.push(chunk));
    child.stderr?.setEncoding("utf8").on("data", (text: string) => {
      if (diagnostics.length < MAX_DIAGNOSTICS) diagnostics += text.slice(0, MAX_DIAGNOSTICS - diagnostics.length);
    });
    let pending = "";
    const status = child.stdio[3] as NodeJS.ReadableStream;
    status.setEncoding("utf8");
    status.on("data", (text: string) => {
      pending += text;
      let newline: number;
      while ((newline = pending.indexOf("\n")) >= 0) {
        const [word, first, second] = pending.slice(0, newline).split(" ");
        pending = pending.slice(newline + 1);
        if (word === "pid") initPid = Number(first);
        else if (word === "ready") ready = true;
        else if (word === "exit") {
          reported = Number(first);
          clearTimeout(timeoutTimer); // the step has ended: collecting its outputs is not its time
        } else if (word === "out" && (second === "file" || second === "directory")) outputs.push([Number(first), second]);
        else if (word === "done") done = true;
      }
    });

    child.on("error", (err) => {
      closed = true;
      cleanup();
      reject(new Error(`cannot start the local step sandbox: ${err.message}`));
    });
    child.on("close", (code) => {
      if (closed) return;
      closed = true;
      cleanup();
      const trimmed = diagnostics.trim();
      if (killedBy) {
        resolve({ exitCode: reported ?? null, killedBy, log: log.bytes(), stdout: stdout.bytes(), outputs: [] });
        return;
      }
      if (!ready) {
        reject(new Error(`the local step sandbox could not be set up: ${trimmed || `exit status ${code}`}`));
        return;
      }
      if (trimmed) log.note(trimmed);
      if (reported === undefined) log.note(`pipewright: the step's sandbox ended unexpectedly (exit status ${code})`);
      else if (!done) log.note("pipewright: the step's outputs were not all collected");
      resolve({ exitCode: reported ?? code, log: log.bytes(), stdout: stdout.bytes(), outputs });
    });

    function cleanup() {
      clearTimeout(timeoutTimer);
      clearTimeout(graceTimer);
      limits.signal?.removeEventListener("abort", onAbort);
    }
  });
}
