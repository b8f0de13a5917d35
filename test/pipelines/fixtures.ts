// Test data shared by the pipelines suites: the original fixtures, and a local HTTP server that
// serves them for CreatePipeline-from-URL.
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join } from "node:path";

export const testdata = new URL("../../../shared/testdata/", import.meta.url).pathname;
export const workflowFile = (name: string) => join(testdata, "workflows", name);
export const uploadFile = (name: string) => join(testdata, "uploads", name);
export const readFixture = (path: string) => readFileSync(path);

/** Serves files by path (`/<name>` → bytes); anything else is a 404. */
export async function fileServer(files: Record<string, Buffer>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const body = files[(req.url ?? "").slice(1)];
    if (!body) return res.writeHead(404).end("not here");
    res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** POSTs a multipart upload the way the KFP UI and SDK do. */
export async function upload(baseUrl: string, fileName: string, bytes: Buffer, query = ""): Promise<{ status: number; body: any }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const form = new FormData();
  form.append("uploadfile", new Blob([new Uint8Array(bytes)]), fileName);
  const res = await fetch(`${baseUrl}/apis/v1beta1/pipelines/upload${query}`, { method: "POST", body: form });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
