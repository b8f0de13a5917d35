// Artifact archives in Argo's format: packing files and folders, unpacking them as Argo's
// executor does, and refusing archives that would write outside their destination.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { Header, type HeaderData } from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packArtifact, readSingleFile, unpackArtifact } from "../../src/engine/local/artifact-archive.js";

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "pipewright-archive-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The entries as GNU tar lists them (type letter and name), in archive order. */
function gnuList(tgz: Uint8Array): string[] {
  return execFileSync("tar", ["-tvzf", "-"], { input: tgz, encoding: "utf8" })
    .trimEnd()
    .split("\n")
    .map((line) => {
      const fields = line.split(/\s+/);
      return `${line[0]} ${fields.slice(5).join(" ")}`;
    });
}

interface RawEntry {
  path: string;
  type?: HeaderData["type"];
  data?: string;
  linkpath?: string;
}

/** A tar.gz written block by block, so that it can hold what no archiver here would write. */
function rawTgz(entries: RawEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const type = entry.type ?? "File";
    const data = Buffer.from(entry.data ?? "");
    const header = new Header({ path: entry.path, type, size: type === "File" ? data.length : 0, mode: 0o644, mtime: new Date(0), linkpath: entry.linkpath });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block);
    if (type === "File" && data.length > 0) blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

describe("packArtifact", () => {
  it("packs a file as one gzipped entry named after its basename", async () => {
    await writeFile(join(dir, "mlpipeline-metrics.json"), '{"metrics":[]}');
    const tgz = await packArtifact(join(dir, "mlpipeline-metrics.json"));
    expect([...tgz.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect(gnuList(tgz)).toEqual(["- mlpipeline-metrics.json"]);
    expect(new TextDecoder().decode(await readSingleFile(tgz))).toBe('{"metrics":[]}');
  });

  it("packs a folder as the folder's entry, then its tree under the folder's basename, links kept", async () => {
    const model = join(dir, "model");
    await mkdir(join(model, "sub"), { recursive: true });
    await writeFile(join(model, "a.txt"), "a");
    await writeFile(join(model, "sub", "b.txt"), "b");
    await symlink("a.txt", join(model, "link"));
    const listing = gnuList(await packArtifact(model));
    expect(listing[0]).toBe("d model/");
    expect(listing.slice(1).sort()).toEqual(["- model/a.txt", "- model/sub/b.txt", "d model/sub/", "l model/link -> a.txt"]);
  });

  it("follows a link given as the artifact but keeps the link's name", async () => {
    await writeFile(join(dir, "real-data"), "via link");
    await symlink(join(dir, "real-data"), join(dir, "data"));
    const tgz = await packArtifact(join(dir, "data"));
    expect(gnuList(tgz)).toEqual(["- data"]);
    expect(new TextDecoder().decode(await readSingleFile(tgz))).toBe("via link");
  });

  it("refuses what is missing or not a file or folder", async () => {
    await expect(packArtifact(join(dir, "absent"))).rejects.toThrow("ENOENT");
    await expect(packArtifact("/dev/null")).rejects.toThrow("not a regular file or a directory");
  });
});

describe("readSingleFile", () => {
  it("reads the one file of an archive made by GNU tar, folder entries aside", async () => {
    await mkdir(join(dir, "single", "only"), { recursive: true });
    await writeFile(join(dir, "single", "only", "file"), "inside");
    const tgz = execFileSync("tar", ["-czf", "-", "-C", join(dir, "single"), "only"]);
    expect(new TextDecoder().decode(await readSingleFile(tgz))).toBe("inside");
  });

  it("refuses archives with no file or several, and what is not an archive", async () => {
    await expect(readSingleFile(rawTgz([{ path: "d/", type: "Directory" }]))).rejects.toThrow("holds 0 files");
    await expect(readSingleFile(rawTgz([{ path: "a", data: "1" }, { path: "b", data: "2" }]))).rejects.toThrow("holds 2 files (a, b), not exactly one");
    await expect(readSingleFile(gzipSync(Buffer.from("not a tar at all, just some text that is long enough")))).rejects.toThrow();
    await expect(readSingleFile(Buffer.from("plain garbage"))).rejects.toThrow();
  });
});

describe("unpackArtifact", () => {
  it("puts a one-file archive's file at the destination", async () => {
    const destination = join(dir, "out-file", "data");
    expect(await unpackArtifact(rawTgz([{ path: "anything-named", data: "payload" }]), destination)).toBe("file");
    expect(await readFile(destination, "utf8")).toBe("payload");
    expect(await readdir(join(dir, "out-file"))).toEqual(["data"]);
  });

  it("renames a one-folder archive's folder to the destination", async () => {
    const source = join(dir, "tree");
    await mkdir(join(source, "sub"), { recursive: true });
    await writeFile(join(source, "x"), "x");
    await writeFile(join(source, "sub", "y"), "y");
    await symlink("x", join(source, "sub-link"));
    const destination = join(dir, "out-tree");
    expect(await unpackArtifact(await packArtifact(source), destination)).toBe("directory");
    expect((await readdir(destination)).sort()).toEqual(["sub", "sub-link", "x"]);
    expect(await readFile(join(destination, "sub", "y"), "utf8")).toBe("y");
    expect(await readlink(join(destination, "sub-link"))).toBe("x");
  });

  it("makes a folder of an archive with several top-level names (as `tar -C dir .` makes them)", async () => {
    const source = join(dir, "several");
    await mkdir(source);
    await writeFile(join(source, "one"), "1");
    await writeFile(join(source, "two"), "2");
    const tgz = execFileSync("tar", ["-czf", "-", "-C", source, "."]);
    const destination = join(dir, "out-several");
    expect(await unpackArtifact(tgz, destination)).toBe("directory");
    expect((await readdir(destination)).sort()).toEqual(["one", "two"]);
    expect((await lstat(destination)).isDirectory()).toBe(true);
  });

  it("round-trips a packed file", async () => {
    await writeFile(join(dir, "round"), Buffer.from([0, 1, 2, 255]));
    const destination = join(dir, "out-round");
    expect(await unpackArtifact(await packArtifact(join(dir, "round")), destination)).toBe("file");
    expect([...(await readFile(destination))]).toEqual([0, 1, 2, 255]);
  });

  it.each([
    ["an absolute name", [{ path: "/etc/evil", data: "x" }], "outside its root"],
    ["a .. name", [{ path: "../evil", data: "x" }], "outside its root"],
    ["a .. inside a name", [{ path: "a/../../evil", data: "x" }], "outside its root"],
    ["an absolute symbolic link", [{ path: "d/", type: "Directory" }, { path: "d/l", type: "SymbolicLink", linkpath: "/etc/passwd" }], "leading outside"],
    ["a symbolic link up and out", [{ path: "d/", type: "Directory" }, { path: "d/l", type: "SymbolicLink", linkpath: "../../x" }], "leading outside"],
    ["a link out of the single top folder", [{ path: "d/", type: "Directory" }, { path: "d/l", type: "SymbolicLink", linkpath: "../sibling" }], "leading outside"],
    ["a hard link out", [{ path: "a", data: "x" }, { path: "b", type: "Link", linkpath: "../a" }], "leading outside"],
    ["the artifact itself a link", [{ path: "l", type: "SymbolicLink", linkpath: "target" }], "is a link"],
    ["a device", [{ path: "null", type: "CharacterDevice" }], "of type CharacterDevice"],
  ] as [string, RawEntry[], string][])("refuses %s", async (_, entries, message) => {
    const destination = join(dir, `refused-${Math.random().toString(36).slice(2)}`);
    await expect(unpackArtifact(rawTgz(entries), destination)).rejects.toThrow(message);
    expect(existsSync(destination)).toBe(false);
  });

  it("accepts links that stay inside", async () => {
    const tgz = rawTgz([
      { path: "d/", type: "Directory" },
      { path: "d/a", data: "A" },
      { path: "d/sub/", type: "Directory" },
      { path: "d/sub/l", type: "SymbolicLink", linkpath: "../a" },
      { path: "d/h", type: "Link", linkpath: "d/a" },
    ]);
    const destination = join(dir, "out-links");
    expect(await unpackArtifact(tgz, destination)).toBe("directory");
    expect(await readFile(join(destination, "sub", "l"), "utf8")).toBe("A");
    expect(await readFile(join(destination, "h"), "utf8")).toBe("A");
  });

  it("refuses an existing destination and leaves no temporary folder behind", async () => {
    const parent = join(dir, "existing");
    await mkdir(join(parent, "there"), { recursive: true });
    await expect(unpackArtifact(rawTgz([{ path: "f", data: "x" }]), join(parent, "there"))).rejects.toThrow("it exists");
    const truncated = gunzipSync(rawTgz([{ path: "f", data: "x".repeat(2000) }])).subarray(0, 1024);
    await expect(unpackArtifact(gzipSync(truncated), join(parent, "new"))).rejects.toThrow();
    expect(await readdir(parent)).toEqual(["there"]);
  });
});
