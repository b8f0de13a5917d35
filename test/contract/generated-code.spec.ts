// gen/ must be what `npm run generate` makes of proto/ and prisma/: the script runs in a scratch
// copy of its inputs and every file it writes is compared byte for byte with ours.
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
// What the generate script reads; gen/ itself is left out so that stale files show up as extra.
const generatorInputs = ["package.json", "buf.yaml", "buf.gen.yaml", "proto", "prisma", "prisma.config.ts"];

const scratch = mkdtempSync(path.join(tmpdir(), "pipewright-generate-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function listFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

it("gen/ is what npm run generate produces", { timeout: 60_000 }, async () => {
  for (const input of generatorInputs) {
    const from = path.join(repoRoot, input);
    if (existsSync(from)) cpSync(from, path.join(scratch, input), { recursive: true });
  }
  symlinkSync(path.join(repoRoot, "node_modules"), path.join(scratch, "node_modules"), "dir");
  await promisify(execFile)("npm", ["run", "--silent", "generate"], {
    cwd: scratch,
    env: { ...process.env, CHECKPOINT_DISABLE: "1", PRISMA_HIDE_UPDATE_MESSAGE: "1" },
    timeout: 55_000,
  });

  const fresh = path.join(scratch, "gen");
  const ours = path.join(repoRoot, "gen");
  const freshFiles = listFiles(fresh);
  const ourFiles = listFiles(ours);
  expect(freshFiles.length).toBeGreaterThan(0);
  const report = {
    missing: freshFiles.filter((f) => !ourFiles.includes(f)),
    extra: ourFiles.filter((f) => !freshFiles.includes(f)),
    outdated: freshFiles.filter(
      (f) => ourFiles.includes(f) && !readFileSync(path.join(fresh, f)).equals(readFileSync(path.join(ours, f))),
    ),
  };
  expect(report, "gen/ is stale: run `npm run generate`").toEqual({ missing: [], extra: [], outdated: [] });
});
