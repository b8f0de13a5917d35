import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { downloadPipelinePackage } from "../../../src/services/pipelines/pipeline-download.js";
import { uploadsDir } from "./archives.js";

const yaml = readFileSync(join(uploadsDir, "arguments-parameters.yaml"));
const zip = readFileSync(join(uploadsDir, "arguments.pipeline.zip"));

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let handler: Handler;
let requests: IncomingMessage[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests.push(req);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests = [];
  handler = (_req, res) => res.end(yaml);
});

async function rejection(promise: Promise<unknown>): Promise<ConnectError> {
  const err: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}

async function expectInvalid(promise: Promise<unknown>, message: string | RegExp): Promise<void> {
  const err = await rejection(promise);
  expect(err.code).toBe(Code.InvalidArgument);
  expect(err.rawMessage).toMatch(message);
}

describe("downloads", () => {
  it("fetches a YAML file and names it after the URL's last segment", async () => {
    const { fileName, bytes } = await downloadPipelinePackage(`${base}/pipelines/arguments-parameters.yaml`);
    expect(fileName).toBe("arguments-parameters.yaml");
    expect(Buffer.from(bytes).equals(yaml)).toBe(true);
    expect(requests[0]!.method).toBe("GET");
  });

  it("fetches binary files intact, and leaves the query out of the name", async () => {
    handler = (_req, res) => res.writeHead(200, { "content-type": "application/zip" }).end(zip);
    const { fileName, bytes } = await downloadPipelinePackage(`${base}/files/arguments.pipeline.zip?token=abc#frag`);
    expect(fileName).toBe("arguments.pipeline.zip");
    expect(Buffer.from(bytes).equals(zip)).toBe(true);
    expect(requests[0]!.url).toBe("/files/arguments.pipeline.zip?token=abc");
  });

  it.each([
    ["/dir/my%20pipe%2B1.yaml", "my pipe+1.yaml"],
    ["/dir/sub/", "sub"],
    ["/dir/bad%zzname.yaml", "bad%zzname.yaml"],
    ["/", "127.0.0.1"],
  ])("names %s %j", async (path, name) => {
    expect((await downloadPipelinePackage(`${base}${path}`)).fileName).toBe(name);
  });

  it("follows redirects, keeping the name of the URL given", async () => {
    handler = (req, res) => {
      if (req.url === "/old/sequential.yaml") res.writeHead(302, { location: "/new/other-name.yaml" }).end();
      else if (req.url === "/new/other-name.yaml") res.end(yaml);
      else res.writeHead(404).end();
    };
    const { fileName, bytes } = await downloadPipelinePackage(`${base}/old/sequential.yaml`);
    expect(fileName).toBe("sequential.yaml");
    expect(Buffer.from(bytes).equals(yaml)).toBe(true);
    expect(requests.map((r) => r.url)).toEqual(["/old/sequential.yaml", "/new/other-name.yaml"]);
  });

  it("sends URL credentials as Basic auth and keeps the password out of messages", async () => {
    handler = (req, res) => res.writeHead(req.headers.authorization === `Basic ${btoa("me:s3cret")}` ? 404 : 500).end();
    const err = await rejection(downloadPipelinePackage(`http://me:s3cret@127.0.0.1:${new URL(base).port}/p.yaml`));
    expect(err.rawMessage).toMatch(/HTTP 404/);
    expect(err.rawMessage).not.toContain("s3cret");
  });

  it("uses the fetch it is given", async () => {
    const seen: string[] = [];
    const fetchImpl = (async (input: string | URL | Request) => {
      seen.push(String(input));
      return new Response("apiVersion: argoproj.io/v1alpha1\n", { status: 200 });
    }) as typeof fetch;
    const { fileName, bytes } = await downloadPipelinePackage("https://example.invalid/a/b.yaml", { fetchImpl });
    expect(seen).toEqual(["https://example.invalid/a/b.yaml"]);
    expect(fileName).toBe("b.yaml");
    expect(Buffer.from(bytes).toString()).toBe("apiVersion: argoproj.io/v1alpha1\n");
  });
});

describe("refusals", () => {
  it.each([
    ["", /^Pipeline URL is empty\. Please specify a valid URL\.$/],
    ["not a url", /^Invalid Pipeline URL not a url\. Please specify a valid URL$/],
    ["/relative/path.yaml", /^Invalid Pipeline URL \/relative\/path\.yaml\. Please specify a valid URL$/],
    ["ftp://example.com/p.yaml", /^Invalid Pipeline URL ftp:\/\/example\.com\/p\.yaml\. Please specify a valid URL: only http and https/],
    ["file:///etc/passwd", /^Invalid Pipeline URL file:\/\/\/etc\/passwd\. Please specify a valid URL/],
  ])("refuses the URL %j", async (url, message) => {
    await expectInvalid(downloadPipelinePackage(url), message);
  });

  it.each([
    [404, "HTTP 404 Not Found"],
    [500, "HTTP 500 Internal Server Error"],
    [204, "HTTP 204 No Content"],
  ])("refuses an answer other than 200: %i", async (status, text) => {
    handler = (_req, res) => res.writeHead(status).end(status === 204 ? undefined : "nope");
    await expectInvalid(
      downloadPipelinePackage(`${base}/p.yaml`),
      `Failed to download the pipeline from ${base}/p.yaml: the server answered ${text}.`,
    );
  });

  it("refuses a closed port, naming the cause", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    await expectInvalid(downloadPipelinePackage(`http://127.0.0.1:${port}/p.yaml`), /: connect ECONNREFUSED 127\.0\.0\.1:\d+\.$/);
  });

  it("names the cause of a failed lookup", async () => {
    const fetchImpl = (async () => {
      const cause = Object.assign(new Error("getaddrinfo ENOTFOUND pipelines.invalid"), { code: "ENOTFOUND" });
      throw new TypeError("fetch failed", { cause });
    }) as typeof fetch;
    await expectInvalid(
      downloadPipelinePackage("http://pipelines.invalid/p.yaml", { fetchImpl }),
      "Failed to download the pipeline from http://pipelines.invalid/p.yaml: getaddrinfo ENOTFOUND pipelines.invalid.",
    );
  });

  it("gives up on a server that never answers", async () => {
    handler = () => {}; // holds the request open
    const started = Date.now();
    await expectInvalid(downloadPipelinePackage(`${base}/slow.yaml`, { timeoutMs: 200 }), /: no complete answer within 0\.2 s\.$/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("gives up on a body that stalls", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-length": "1000" });
      res.write("apiVersion: argoproj.io/v1alpha1\n"); // and nothing more
    };
    await expectInvalid(downloadPipelinePackage(`${base}/stalls.yaml`, { timeoutMs: 300 }), /no complete answer within 0\.3 s/);
  });

  it("refuses a declared length over the cap before reading the body", async () => {
    let written = 0;
    handler = (_req, res) => {
      res.writeHead(200, { "content-length": String(10 * 1024 * 1024) });
      res.write(Buffer.alloc(1024), () => (written += 1024)); // the rest never comes
    };
    await expectInvalid(
      downloadPipelinePackage(`${base}/big.yaml`, { maxBytes: 64 * 1024, timeoutMs: 5_000 }),
      /: the file is larger than the maximum supported size of 65536 bytes\.$/,
    );
    expect(written).toBeLessThanOrEqual(1024);
  });

  it("stops reading a body that streams past the cap", async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const limit = 1024 * 1024 * 1024; // 1 GiB, if nobody stopped it
    let written = 0;
    const closed = new Promise<void>((resolve) => {
      handler = (_req, res) => {
        res.writeHead(200, { "content-type": "application/octet-stream" }); // chunked, no length
        res.on("close", () => resolve());
        const pump = () => {
          while (!res.destroyed && written < limit) {
            written += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        pump();
      };
    });
    await expectInvalid(
      downloadPipelinePackage(`${base}/endless.yaml`, { maxBytes: 1024 * 1024 }),
      /the file is larger than the maximum supported size of 1048576 bytes\.$/,
    );
    await closed;
    expect(written).toBeLessThan(limit / 8);
  });

  it("accepts a body of exactly the cap", async () => {
    handler = (_req, res) => res.end(Buffer.alloc(4096, 0x62));
    expect((await downloadPipelinePackage(`${base}/exact.yaml`, { maxBytes: 4096 })).bytes.length).toBe(4096);
    await expectInvalid(downloadPipelinePackage(`${base}/exact.yaml`, { maxBytes: 4095 }), /larger than the maximum/);
  });
});
