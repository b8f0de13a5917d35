// The filesystem artifact store keeps every key inside its root.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { FilesystemArtifactStore } from "../../src/artifacts/store.js";

const dir = mkdtempSync(join(tmpdir(), "pipewright-artifacts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const store = new FilesystemArtifactStore(join(dir, "root"));

describe("FilesystemArtifactStore", () => {
  it("stores and reads bytes by key, and answers undefined for a missing key", async () => {
    await store.put("artifacts/run-1/node-1/out.tgz", Buffer.from([1, 2, 3]));
    expect(Buffer.from((await store.get("artifacts/run-1/node-1/out.tgz"))!)).toEqual(Buffer.from([1, 2, 3]));
    expect(await store.get("artifacts/run-1/node-1/other.tgz")).toBeUndefined();
    expect(readdirSync(join(dir, "root/artifacts/run-1/node-1"))).toEqual(["out.tgz"]);
  });

  it("names a key's file with a file:// URI", async () => {
    const uri = store.uriOf("artifacts/run 1/node-1/out.tgz");
    expect(uri).toMatch(/^file:\/\/\//);
    expect(fileURLToPath(uri)).toBe(join(dir, "root", "artifacts", "run 1", "node-1", "out.tgz"));
    expect(() => store.uriOf("../escape")).toThrow(/invalid artifact key/);
  });

  it.each(["../escape", "a/../../escape", "/etc/passwd", "a//b", "", "a/./b", "a\\..\\b", "a/\0"])("refuses the key %j", async (key) => {
    await expect(store.get(key)).rejects.toThrow(/invalid artifact key/);
    await expect(store.put(key, Buffer.from("x"))).rejects.toThrow(/invalid artifact key/);
  });
});
