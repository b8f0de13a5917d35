// Artifacts in Argo's archive format: a gzipped tar. As Argo's executor (util/archive, TarGzToWriter)
// writes them, a file is one entry named after its basename; a folder is an entry for the folder
// itself, named after its basename, followed by everything under it as `<basename>/…` (symbolic
// links inside stay links). KFP's UI and persistence agent read mlpipeline-metrics and
// mlpipeline-ui-metadata as such an archive holding exactly one file.
//
// Unpacking follows Argo's executor (loadArtifacts → untar): an archive whose entries share one
// top-level name (one file, or one folder with its contents) becomes that file or folder at the
// destination; an archive with several top-level names becomes a folder holding them.
import { randomBytes } from "node:crypto";
import { lstat, mkdir, readdir, realpath, rename, rm, stat } from "node:fs/promises";
import { basename, dirname, join, posix, resolve } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { create, extract, Parser, type ReadEntry } from "tar";

const REGULAR = new Set(["File", "OldFile", "ContiguousFile"]);
const ALLOWED = new Set([...REGULAR, "Directory", "SymbolicLink", "Link"]);

/** The archive of a file or folder on the host, as Argo's executor makes it. */
export async function packArtifact(hostPath: string): Promise<Uint8Array> {
  const absolute = resolve(hostPath);
  const info = await stat(absolute);
  if (!info.isFile() && !info.isDirectory()) throw new Error(`${hostPath} is not a regular file or a directory`);
  // A symbolic link given as the artifact itself is followed (as Argo's os.Stat/os.Open do), but
  // the entries keep the link's name.
  const name = basename(absolute);
  const real = (await lstat(absolute)).isSymbolicLink() ? await realpath(absolute) : absolute;
  const realName = basename(real);
  const pack = create(
    {
      gzip: true,
      cwd: dirname(real),
      portable: true,
      onWriteEntry:
        realName === name
          ? undefined
          : (entry) => {
              entry.path = name + entry.path.slice(realName.length);
            },
    },
    [realName],
  );
  const chunks: Buffer[] = [];
  for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

interface EntryInfo {
  path: string; // normalized, relative, without a trailing slash
  type: string;
  linkpath: string;
}

/** Every entry's name, type and link target, reading the whole archive. */
function listEntries(tgz: Uint8Array, onFile?: (entry: ReadEntry) => void): Promise<EntryInfo[]> {
  return new Promise((resolvePromise, reject) => {
    const entries: EntryInfo[] = [];
    const parser = new Parser({ strict: true });
    parser.on("entry", (entry: ReadEntry) => {
      entries.push({ path: normalizeEntryPath(entry.path), type: entry.type, linkpath: entry.linkpath ?? "" });
      if (onFile && REGULAR.has(entry.type)) onFile(entry);
      else entry.resume();
    });
    parser.on("error", (err: Error) => reject(new Error(`not a valid artifact archive: ${err.message}`)));
    parser.on("end", () => resolvePromise(entries));
    parser.end(Buffer.from(tgz.buffer, tgz.byteOffset, tgz.byteLength));
  });
}

function normalizeEntryPath(path: string): string {
  const normalized = posix.normalize(path.replace(/\\/g, "/"));
  return normalized.endsWith("/") && normalized.length > 1 ? normalized.slice(0, -1) : normalized;
}

function escapes(path: string): boolean {
  return posix.isAbsolute(path) || path === ".." || path.startsWith("../");
}

function within(path: string, root: string): boolean {
  if (root === "") return !escapes(path);
  return path === root || path.startsWith(`${root}/`);
}

/** The top-level names of the archive; throws for entries that would land outside the destination. */
function checkEntries(entries: EntryInfo[]): string[] {
  const tops = new Set<string>();
  for (const entry of entries) {
    if (escapes(entry.path)) throw new Error(`the artifact archive has an entry outside its root: ${JSON.stringify(entry.path)}`);
    if (!ALLOWED.has(entry.type)) throw new Error(`the artifact archive has an entry of type ${entry.type}: ${JSON.stringify(entry.path)}`);
    if (entry.path !== ".") tops.add(entry.path.split("/")[0]);
  }
  // With one top-level folder, that folder becomes the destination: links must stay inside it.
  const root = tops.size === 1 ? [...tops][0] : "";
  for (const entry of entries) {
    if (entry.type !== "SymbolicLink" && entry.type !== "Link") continue;
    if (entry.path === root && tops.size === 1) throw new Error(`the artifact archive is a link: ${JSON.stringify(entry.path)}`);
    // A symbolic link is relative to its own folder; a hard link names an entry of the archive.
    const target = entry.type === "SymbolicLink" ? posix.normalize(posix.join(posix.dirname(entry.path), entry.linkpath)) : normalizeEntryPath(entry.linkpath);
    if (posix.isAbsolute(entry.linkpath) || !within(target, root)) {
      throw new Error(`the artifact archive has a link leading outside it: ${JSON.stringify(entry.path)} -> ${JSON.stringify(entry.linkpath)}`);
    }
  }
  return [...tops];
}

/**
 * Unpacks an artifact archive at `destination` (which must not exist; its parent is created):
 * a file when the archive holds one file, a folder otherwise. Refuses absolute names, `..`,
 * links leading outside, and device or FIFO entries.
 */
export async function unpackArtifact(tgz: Uint8Array, destination: string): Promise<"file" | "directory"> {
  checkEntries(await listEntries(tgz));
  const target = resolve(destination);
  const exists = await lstat(target).then(
    () => true,
    () => false,
  );
  if (exists) throw new Error(`cannot unpack an artifact at ${target}: it exists`);
  await mkdir(dirname(target), { recursive: true });
  const temporary = join(dirname(target), `.${basename(target)}.unpack-${randomBytes(4).toString("hex")}`);
  await mkdir(temporary);
  try {
    await pipeline(Readable.from([Buffer.from(tgz.buffer, tgz.byteOffset, tgz.byteLength)]), extract({ cwd: temporary, strict: true, preserveOwner: false }));
    const names = await readdir(temporary);
    if (names.length === 1) {
      const only = join(temporary, names[0]);
      const kind = (await lstat(only)).isDirectory() ? "directory" : "file";
      await rename(only, target);
      await rm(temporary, { recursive: true, force: true });
      return kind;
    }
    await rename(temporary, target);
    return "directory";
  } catch (err) {
    await rm(temporary, { recursive: true, force: true });
    throw err;
  }
}

/** The content of the one regular file in an artifact archive (folder entries aside). */
export async function readSingleFile(tgz: Uint8Array): Promise<Uint8Array> {
  const files: Buffer[][] = [];
  const entries = await listEntries(tgz, (entry) => {
    const chunks: Buffer[] = [];
    files.push(chunks);
    entry.on("data", (chunk: Buffer) => chunks.push(chunk));
  });
  if (files.length !== 1) {
    const names = entries.filter((entry) => REGULAR.has(entry.type)).map((entry) => entry.path);
    throw new Error(`the artifact archive holds ${files.length} files${names.length > 0 ? ` (${names.slice(0, 5).join(", ")})` : ""}, not exactly one`);
  }
  return Buffer.concat(files[0]);
}
