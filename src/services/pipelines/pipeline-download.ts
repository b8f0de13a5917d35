// CreatePipeline's import from a URL: an HTTP(S) GET with a deadline and a size cap enforced
// while the body streams in. Every failure is the caller's URL's fault, hence InvalidArgument.
import { STATUS_CODES } from "node:http";
import { ConnectError } from "@connectrpc/connect";
import { invalidArgument } from "../../errors.js";
import { maxPackageBytes } from "./pipeline-package.js";

export interface DownloadOptions {
  /** For the whole download, headers and body; default 30 s. */
  timeoutMs?: number;
  /** Default maxPackageBytes (32 MiB). */
  maxBytes?: number;
  fetchImpl?: typeof fetch;
}

export interface DownloadedPackage {
  /** The last segment of the URL's path as given (before redirects), percent-decoded once. */
  fileName: string;
  bytes: Uint8Array;
}

export const defaultDownloadTimeoutMs = 30_000;

class DownloadTimeout extends Error {}

export async function downloadPipelinePackage(url: string, options: DownloadOptions = {}): Promise<DownloadedPackage> {
  const { timeoutMs = defaultDownloadTimeoutMs, maxBytes = maxPackageBytes, fetchImpl = fetch } = options;
  if (url.trim() === "") throw invalidArgument("Pipeline URL is empty. Please specify a valid URL.");
  let target: URL;
  try {
    target = new URL(url.trim());
  } catch {
    throw invalidArgument(`Invalid Pipeline URL ${url}. Please specify a valid URL`);
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") {
    throw invalidArgument(`Invalid Pipeline URL ${url}. Please specify a valid URL: only http and https are supported`);
  }

  // fetch refuses URLs with credentials: send them as Basic auth, and never echo the password.
  const headers = new Headers();
  if (target.username || target.password) {
    const user = decodeURIComponent(target.username);
    const password = decodeURIComponent(target.password);
    headers.set("authorization", `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`);
  }
  const fileName = fileNameOf(target);
  const shown = redacted(target);
  target.username = "";
  target.password = "";
  const failed = (why: string) => invalidArgument(`Failed to download the pipeline from ${shown}: ${why}`);

  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new DownloadTimeout()), timeoutMs);
  const timedOut = () => failed(`no complete answer within ${seconds(timeoutMs)}.`);
  try {
    let response: Response;
    try {
      response = await fetchImpl(target, { redirect: "follow", signal: abort.signal, headers });
    } catch (err) {
      if (abort.signal.aborted) throw timedOut();
      throw failed(`${causeOf(err)}.`);
    }
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => {});
      const text = response.statusText || STATUS_CODES[response.status] || "";
      throw failed(`the server answered HTTP ${response.status}${text ? ` ${text}` : ""}.`);
    }
    const tooLarge = () => failed(`the file is larger than the maximum supported size of ${maxBytes} bytes.`);
    const declared = Number(response.headers.get("content-length"));
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel().catch(() => {});
      throw tooLarge();
    }

    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = response.body?.getReader();
    try {
      for (;;) {
        const { done, value } = (await reader?.read()) ?? { done: true, value: undefined };
        if (done) break;
        total += value.byteLength;
        if (total > maxBytes) {
          await reader?.cancel().catch(() => {});
          throw tooLarge();
        }
        chunks.push(value);
      }
    } catch (err) {
      if (abort.signal.aborted) throw timedOut();
      if (err instanceof ConnectError) throw err;
      throw failed(`the download broke off: ${causeOf(err)}.`);
    }
    return { fileName, bytes: Buffer.concat(chunks, total) };
  } finally {
    clearTimeout(timer);
  }
}

/** The path's last non-empty segment, decoded once; the host name for a bare host URL. */
function fileNameOf(url: URL): string {
  const segment = url.pathname.split("/").filter((s) => s !== "").pop();
  if (segment === undefined) return url.hostname;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function redacted(url: URL): string {
  if (!url.password) return url.href;
  const copy = new URL(url.href);
  copy.password = "***";
  return copy.href;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * What went wrong, from the innermost cause: undici's "fetch failed" wraps the system error
 * ("connect ECONNREFUSED 127.0.0.1:80", "getaddrinfo ENOTFOUND example.invalid", ...).
 */
function causeOf(err: unknown): string {
  let message = err instanceof Error ? err.message : String(err);
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message) message = current.message;
    const next: unknown =
      current.cause ?? (current instanceof AggregateError ? (current.errors as unknown[])[0] : undefined);
    current = next;
  }
  return message;
}
