// Builds small zip and tar.gz archives in memory for the package tests, including broken ones
// (lying sizes, truncation) that no archiver would write.
import { deflateRawSync, gzipSync } from "node:zlib";
import { Header, Pax } from "tar";

export const uploadsDir = new URL("../../../../shared/testdata/uploads/", import.meta.url).pathname;
export const workflowsDir = new URL("../../../../shared/testdata/workflows/", import.meta.url).pathname;

export interface ZipEntry {
  name: string;
  data?: string | Uint8Array;
  /** 0 stored, 8 deflated (default). */
  method?: 0 | 8;
  /** Overrides the uncompressed size written in the headers. */
  declaredSize?: number;
}

const crcTable = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = crcTable[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const bytesOf = (data: string | Uint8Array = "") => (typeof data === "string" ? Buffer.from(data) : Buffer.from(data));

export function zipOf(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const data = bytesOf(entry.data);
    const method = entry.method ?? 8;
    const stored = method === 8 ? deflateRawSync(data) : data;
    const name = Buffer.from(entry.name);
    const size = entry.declaredSize ?? data.length;
    const crc = crc32(data);

    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(method, 8);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(stored.length, 18);
    local.writeUInt32LE(size, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, stored);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(method, 10);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(stored.length, 20);
    central.writeUInt32LE(size, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    centrals.push(central, name);
    offset += local.length + name.length + stored.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

export interface TarEntry {
  name: string;
  data?: string | Uint8Array;
  type?: "File" | "Directory" | "SymbolicLink";
}

/**
 * An uncompressed tar: ustar headers (preceded by a pax header for long names), data padded to
 * 512-byte blocks, two zero blocks.
 */
export function tarOf(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const data = bytesOf(entry.data);
    const type = entry.type ?? "File";
    const header = new Header({
      path: entry.name,
      type,
      size: type === "File" ? data.length : 0,
      mode: type === "Directory" ? 0o755 : 0o644,
      mtime: new Date(0),
      linkpath: type === "SymbolicLink" ? "elsewhere" : undefined,
    });
    const block = Buffer.alloc(512);
    if (header.encode(block, 0)) blocks.push(new Pax({ path: entry.name, mtime: new Date(0) }).encode());
    blocks.push(block);
    if (type === "File" && data.length > 0) {
      blocks.push(data, Buffer.alloc((512 - (data.length % 512)) % 512));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

export const tarGzOf = (entries: TarEntry[]) => gzipSync(tarOf(entries));
