// The README's quickstart as the tests see it: the text between its markers, and a way to run
// shell commands without blocking the event loop (the server under test lives in this process).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const repoRoot = fileURLToPath(new URL("../../", import.meta.url));
export const readme = () => readFileSync(join(repoRoot, "README.md"), "utf8");

/** The text between `<!-- <marker>:begin -->` and `<!-- <marker>:end -->`; it must occur once. */
export function between(text: string, marker: string): string {
  const begin = `<!-- ${marker}:begin -->`;
  const end = `<!-- ${marker}:end -->`;
  const start = text.indexOf(begin);
  const stop = text.indexOf(end);
  if (start < 0 || stop < start) throw new Error(`README.md has no ${begin} … ${end}`);
  if (text.indexOf(begin, start + 1) >= 0) throw new Error(`README.md has ${begin} twice`);
  return text.slice(start + begin.length, stop);
}

/** The bodies of the fenced code blocks of `text` in the given language, in order. */
export function fencedBlocks(text: string, language: string): string[] {
  const fence = /^```([\w-]*)[ \t]*\n([\s\S]*?)^```[ \t]*$/gm;
  return [...text.matchAll(fence)].filter((m) => m[1] === language).map((m) => m[2]);
}

export interface ShellResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `script` with `bash -euo pipefail` in the repository's root; kills it after `timeoutMs`. */
export function runBash(script: string, timeoutMs: number): Promise<ShellResult> {
  return new Promise((resolve, reject) => {
    // A proxy configured on the machine must not see requests to the local test server.
    const env = { ...process.env, NO_PROXY: "127.0.0.1,localhost", no_proxy: "127.0.0.1,localhost" };
    const child = spawn("bash", ["-euo", "pipefail", "-c", script], { cwd: repoRoot, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      stderr += `\n[killed after ${timeoutMs} ms]`;
      child.kill("SIGKILL");
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
