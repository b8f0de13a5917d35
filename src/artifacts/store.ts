// Artifact storage behind one interface: the filesystem under DATA_DIR by default, an
// S3-compatible store later. Keys are relative, slash-separated paths such as
// `artifacts/<run>/<node>/<name>.tgz`.
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname, join, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { invalidArgument } from "../errors.js";

export interface ArtifactStore {
  /** The stored bytes, or undefined when nothing is stored under the key. */
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, data: Uint8Array): Promise<void>;
  /** Where the key's bytes are, as a URI others can resolve (recorded as artifacts' uri in the metadata service). */
  uriOf(key: string): string;
}

export class FilesystemArtifactStore implements ArtifactStore {
  private readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return await readFile(this.pathOf(key));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    // Write then rename, so a reader never sees half an artifact.
    const partial = `${path}.partial-${process.pid}`;
    await writeFile(partial, data);
    await rename(partial, path);
  }

  /** A `file://` URI of the file the key is stored in (whether or not it exists yet). */
  uriOf(key: string): string {
    return pathToFileURL(this.pathOf(key)).href;
  }

  /** Refuses keys that would leave the root (absolute, `..`, empty segments). */
  private pathOf(key: string): string {
    const segments = key.split("/");
    if (key === "" || segments.some((s) => s === "" || s === "." || s === ".." || s.includes("\\") || s.includes("\0"))) {
      throw invalidArgument(`invalid artifact key "${key}"`);
    }
    const path = join(this.root, ...segments);
    if (!path.startsWith(this.root + sep)) throw invalidArgument(`invalid artifact key "${key}"`);
    return path;
  }
}
