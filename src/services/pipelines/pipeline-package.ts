// Pipeline packages: the workflow YAML inside an uploaded or downloaded file. A package is the
// YAML itself (chosen by file name), a zip or a gzip'd tarball (chosen by magic bytes); from an
// archive the entry `pipeline.yaml` wins, else the first YAML entry. No I/O: bytes in, text out.
import { createGunzip } from "node:zlib";
import { Code, ConnectError } from "@connectrpc/connect";
import { Parser as TarParser, type ReadEntry } from "tar";
import yauzl from "yauzl";
import { apiError, invalidArgument } from "../../errors.js";

/** The largest package, and the largest workflow inside an archive, in bytes (32 MiB). */
export const maxPackageBytes = 32 * 1024 * 1024;

/**
 * A tarball is read as a stream and may hold more than the workflow, but not without bound:
 * decompression stops past this many bytes (it guards the CPU, not the memory).
 */
const maxTarballExpandedBytes = 8 * maxPackageBytes;

const unexpectedFormat = "Unexpected pipeline file format. Support .zip, .tar.gz or YAML.";

/** The original server's message for a package over the limit; ResourceExhausted, as gRPC has it. */
export function fileTooLarge(maxBytes = maxPackageBytes) {
  return apiError(Code.ResourceExhausted, `File size too large. Maximum supported size: ${maxBytes}`);
}

/** `.yaml` or `.yml`, in any letter case. */
export function isYamlFileName(name: string): boolean {
  return /\.ya?ml$/i.test(name);
}

/**
 * The workflow text inside a package, byte for byte (as UTF-8). Throws InvalidArgument for
 * anything that is not a package with a workflow in it, ResourceExhausted for anything larger
 * than maxPackageBytes (the package, or the workflow once decompressed).
 */
export async function extractWorkflowText(fileName: string, bytes: Uint8Array): Promise<string> {
  if (bytes.length > maxPackageBytes) throw fileTooLarge();
  if (isYamlFileName(fileName)) return utf8Text(bytes);
  if (bytes.length > 2 && bytes[0] === 0x50 && bytes[1] === 0x4b) return utf8Text(await workflowFromZip(bytes));
  if (bytes.length > 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) return utf8Text(await workflowFromTarball(bytes));
  // Whatever the name says: an archive without its magic bytes (an empty file, say) is no archive.
  throw invalidArgument(unexpectedFormat);
}

function utf8Text(bytes: Uint8Array): string {
  try {
    // ignoreBOM keeps a byte-order mark in the text: the template must come back unchanged.
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw invalidArgument("The pipeline file is not UTF-8 text, so it cannot be YAML.");
  }
}

const zipError = (reason: string) => invalidArgument(`Error extracting pipeline from the zip file. ${reason}`);
const tarballError = (reason: string) => invalidArgument(`Error extracting pipeline from the tarball file. ${reason}`);

/** Entry names that are the pipeline itself, wherever else YAML files sit in the archive. */
const isPipelineEntry = (name: string) => name === "pipeline.yaml" || name === "./pipeline.yaml";
/** macOS resource forks zipped alongside the real files. */
const isMacMetadata = (name: string) => name.startsWith("__MACOSX/") || name.startsWith("./__MACOSX/");

function noWorkflowEntry(kind: "zip" | "tarball", names: string[]) {
  const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? `, … (${names.length} entries)` : "");
  return invalidArgument(`Expecting a pipeline.yaml file inside the ${kind}. Got: ${shown}`);
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function workflowFromZip(bytes: Uint8Array): Promise<Buffer> {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let zip: yauzl.ZipFile;
  try {
    // decodeStrings off: names are taken as UTF-8 and not vetted as extraction paths, since
    // nothing is extracted to disk.
    zip = await yauzl.fromBufferPromise(buffer, { decodeStrings: false, validateEntrySizes: true });
  } catch (err) {
    throw zipError(`Not a valid zip file: ${errorText(err)}`);
  }
  if (zip.entryCount === 0) throw zipError("Empty zip file.");

  const names: string[] = [];
  let chosen: yauzl.Entry | undefined;
  let firstYaml: yauzl.Entry | undefined;
  try {
    for await (const entry of zip.eachEntry()) {
      const name = (entry.fileName as unknown as Buffer).toString("utf8");
      names.push(name);
      if (name.endsWith("/") || isMacMetadata(name)) continue;
      if (isPipelineEntry(name)) {
        chosen = entry;
        break;
      }
      if (!firstYaml && isYamlFileName(name)) firstYaml = entry;
    }
  } catch (err) {
    throw zipError(`Not a valid zip file: ${errorText(err)}`);
  }
  chosen ??= firstYaml;
  if (!chosen) throw noWorkflowEntry("zip", names);
  // The declared size bounds what is inflated: yauzl fails a stream that produces more.
  if (chosen.uncompressedSize > maxPackageBytes) throw fileTooLarge();
  try {
    const stream = await zip.openReadStreamPromise(chosen);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  } catch (err) {
    throw zipError(`Not a valid zip file: ${errorText(err)}`);
  }
}

interface TarCandidate {
  chunks: Buffer[];
  tooLarge: boolean;
  complete: boolean;
}

async function workflowFromTarball(bytes: Uint8Array): Promise<Buffer> {
  // strict: a damaged header or a truncated archive is an error, not a warning.
  const parser = new TarParser({ strict: true });
  const names: string[] = [];
  let pipeline: TarCandidate | undefined;
  let firstYaml: TarCandidate | undefined;
  let failure: unknown;
  parser.on("error", (err: Error) => (failure ??= err));
  parser.on("entry", (entry: ReadEntry) => {
    const name = entry.path;
    names.push(name);
    const regular = entry.type === "File" || entry.type === "OldFile" || entry.type === "ContiguousFile";
    const isPipeline = isPipelineEntry(name);
    if (!regular || pipeline || isMacMetadata(name) || !(isPipeline || (!firstYaml && isYamlFileName(name)))) {
      entry.resume();
      return;
    }
    const candidate: TarCandidate = { chunks: [], tooLarge: entry.size > maxPackageBytes, complete: false };
    if (isPipeline) pipeline = candidate;
    else firstYaml = candidate;
    entry.on("end", () => (candidate.complete = true));
    if (candidate.tooLarge) entry.resume();
    else entry.on("data", (chunk: Buffer) => candidate.chunks.push(chunk));
  });

  const gunzip = createGunzip();
  let expanded = 0;
  try {
    gunzip.end(bytes);
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      expanded += chunk.length;
      if (expanded > maxTarballExpandedBytes) {
        throw apiError(Code.ResourceExhausted, `File size too large. The tarball expands to more than ${maxTarballExpandedBytes} bytes.`);
      }
      await write(parser, chunk);
      // pipeline.yaml wins: whatever follows it does not matter.
      if (failure || pipeline?.complete) break;
    }
    if (!failure && !pipeline?.complete) await end(parser);
  } catch (err) {
    if (err instanceof ConnectError) throw err;
    failure ??= err; // gzip errors: not gzip after all, corrupt or truncated
  } finally {
    gunzip.destroy();
  }
  if (failure) throw tarballError(`Not a valid tarball file: ${errorText(failure)}`);

  const chosen = pipeline ?? firstYaml;
  if (!chosen) {
    if (names.length === 0) throw tarballError("Empty tarball file.");
    throw noWorkflowEntry("tarball", names);
  }
  if (chosen.tooLarge) throw fileTooLarge();
  return Buffer.concat(chosen.chunks);
}

function write(parser: TarParser, chunk: Buffer): Promise<void> {
  if (parser.write(chunk)) return Promise.resolve();
  return settled(parser, ["drain"]);
}

function end(parser: TarParser): Promise<void> {
  const done = settled(parser, ["end", "finish", "close"]);
  parser.end();
  return done;
}

/** Resolves on the first of the events, or on an error or abort (which the caller has recorded). */
function settled(parser: TarParser, events: string[]): Promise<void> {
  const all = [...events, "error", "abort"];
  return new Promise((resolve) => {
    const done = () => {
      for (const event of all) parser.off(event, done);
      resolve();
    };
    for (const event of all) parser.on(event, done);
  });
}
