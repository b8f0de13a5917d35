import { request as httpRequest } from "node:http";
import { create, toJson, type DescMethod, type Message } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ExperimentService } from "../../gen/proto/kfp/experiment_pb.js";
import { PipelineSchema, PipelineService } from "../../gen/proto/kfp/pipeline_pb.js";
import { PipelineUploadService, type UploadPipelineRequest } from "../../gen/proto/kfp/pipeline_upload_pb.js";
import { alreadyExists, apiError, invalidArgument, notFound } from "../../src/errors.js";
import type { CallInfo } from "../../src/server/call-pipeline.js";
import { uploadPath, uploadRoute } from "../../src/server/upload-route.js";
import { replyWithApiStatus, restGateway } from "../../src/transcoding/index.js";

interface RecordedCall {
  method: DescMethod;
  input: Message;
  info: CallInfo;
}

const MAX_BYTES = 32 * 1024 * 1024;
const yaml = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\n";
const stored = create(PipelineSchema, {
  id: "p-1",
  name: "stored",
  createdAt: timestampFromMs(1000),
  parameters: [{ name: "param1", value: "hello" }, { name: "param2" }],
});

// A fake call pipeline: records each call and answers with `respond`. The upload route only
// needs call(); the REST gateway beside it also needs the services.
let calls: RecordedCall[] = [];
let respond: (call: RecordedCall) => Message | Promise<Message>;
const pipeline = {
  services: [ExperimentService, PipelineService],
  async call<O extends Message>(method: DescMethod, input: Message, info: CallInfo): Promise<O> {
    const call = { method, input, info };
    calls.push(call);
    return (await respond(call)) as O;
  },
};

let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  app = Fastify({ frameworkErrors: replyWithApiStatus, bodyLimit: 1024 * 1024 });
  await app.register(uploadRoute, { pipeline, maxBytes: MAX_BYTES });
  await app.register(restGateway, { pipeline, bodyLimit: 1024 * 1024 });
  base = await app.listen({ port: 0, host: "127.0.0.1" });
});

afterAll(() => app.close());

beforeEach(() => {
  calls = [];
  respond = ({ method }) => (method === PipelineUploadService.method.uploadPipeline ? stored : create(method.output));
});

function form(parts: [string, string | Blob, string?][]): FormData {
  const body = new FormData();
  for (const [field, value, fileName] of parts) {
    if (typeof value === "string") body.append(field, value);
    else body.append(field, value, fileName);
  }
  return body;
}

async function post(body: BodyInit | undefined, query = "", headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${uploadPath}${query}`, { method: "POST", body, headers });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}

function uploadInput(): UploadPipelineRequest {
  expect(calls).toHaveLength(1);
  expect(calls[0]!.method).toBe(PipelineUploadService.method.uploadPipeline);
  return calls[0]!.input as UploadPipelineRequest;
}

function expectApiStatus(json: unknown, code: Code, message: string | RegExp) {
  const body = json as { error: string; message: string; code: number; details: { error_message: string }[] };
  expect(body.code).toBe(code);
  expect(body.error).toMatch(message);
  expect(body.message).toBe(body.error);
  expect(body.details[0]).toMatchObject({ "@type": "type.googleapis.com/api.Error" });
  expect(body.details[0]!.error_message).toMatch(message);
}

describe("upload success", () => {
  it("passes the file, its name and the query's name and description, and answers the pipeline", async () => {
    const res = await post(
      form([["uploadfile", new Blob([yaml]), "arguments-parameters.yaml"]]),
      "?name=my%20pipe%2B1%2525&description=d%C3%A9j%C3%A0+vu",
      { authorization: "Bearer t0k" },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.json).toEqual({
      id: "p-1",
      name: "stored",
      created_at: "1970-01-01T00:00:01Z",
      parameters: [{ name: "param1", value: "hello" }, { name: "param2" }],
    });
    const input = uploadInput();
    expect(Buffer.from(input.file).toString()).toBe(yaml);
    expect(input.fileName).toBe("arguments-parameters.yaml");
    // Decoded once: %2B is "+", %2525 is "%25", and "+" in the query is a space.
    expect(input.name).toBe("my pipe+1%25");
    expect(input.description).toBe("déjà vu");
    const { info } = calls[0]!;
    expect(info.protocolName).toBe("rest");
    expect(info.requestMethod).toBe("POST");
    expect(info.headers.get("authorization")).toBe("Bearer t0k");
  });

  it("leaves name and description empty when the query has none", async () => {
    await post(form([["uploadfile", new Blob([yaml]), "p.yaml"]]));
    const input = uploadInput();
    expect(input.name).toBe("");
    expect(input.description).toBe("");
  });

  it("takes the first of repeated query values", async () => {
    await post(form([["uploadfile", new Blob([yaml]), "p.yaml"]]), "?name=a&name=b");
    expect(uploadInput().name).toBe("a");
  });

  it("keeps binary files byte for byte", async () => {
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 7919 + (i >> 8)) % 256);
    await post(form([["uploadfile", new Blob([bytes]), "pkg.tar.gz"]]));
    const input = uploadInput();
    expect(input.fileName).toBe("pkg.tar.gz");
    expect(Buffer.from(input.file).equals(Buffer.from(bytes))).toBe(true);
  });

  it("skips other fields and files", async () => {
    const res = await post(
      form([
        ["comment", "hello"],
        ["other", new Blob(["not this one"]), "other.yaml"],
        ["uploadfile", new Blob([yaml]), "this.yaml"],
        ["uploadfile", new Blob(["nor this one"]), "second.yaml"],
      ]),
    );
    expect(res.status).toBe(200);
    const input = uploadInput();
    expect(input.fileName).toBe("this.yaml");
    expect(Buffer.from(input.file).toString()).toBe(yaml);
  });

  it("accepts a file of exactly the limit", async () => {
    const res = await post(form([["uploadfile", new Blob([new Uint8Array(MAX_BYTES)]), "big.yaml"]]));
    expect(res.status).toBe(200);
    expect(uploadInput().file.length).toBe(MAX_BYTES);
  });

  it("still serves the same connection after an upload", async () => {
    for (let i = 0; i < 3; i++) {
      expect((await post(form([["uploadfile", new Blob([yaml]), `p${i}.yaml`]]))).status).toBe(200);
    }
    expect(calls).toHaveLength(3);
  });
});

describe("bad requests", () => {
  it("answers 400 when the form has no uploadfile", async () => {
    const res = await post(form([["file", new Blob([yaml]), "p.yaml"]]));
    expect(res.status).toBe(400);
    expectApiStatus(res.json, Code.InvalidArgument, /no file in the field uploadfile/);
    expect(calls).toHaveLength(0);
  });

  it("answers 400 when uploadfile is a plain field, not a file", async () => {
    const res = await post(form([["uploadfile", yaml]]));
    expect(res.status).toBe(400);
    expectApiStatus(res.json, Code.InvalidArgument, /no file in the field uploadfile/);
  });

  it("answers 400 to an empty form", async () => {
    const res = await post(new FormData());
    expect(res.status).toBe(400);
    expectApiStatus(res.json, Code.InvalidArgument, /uploadfile/);
  });

  it.each([
    ["JSON", JSON.stringify({ uploadfile: yaml }), { "content-type": "application/json" }],
    ["octet-stream", yaml, { "content-type": "application/octet-stream" }],
    ["text", yaml, { "content-type": "text/plain" }],
    ["no body", undefined, {}],
  ])("answers 400 to a request that is not multipart (%s)", async (_kind, body, headers) => {
    const res = await post(body, "", headers);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toBe("application/json");
    expectApiStatus(res.json, Code.InvalidArgument, /must be multipart\/form-data/);
    expect(calls).toHaveLength(0);
  });

  it("answers 400 to broken multipart", async () => {
    const res = await post("--xyz\r\nContent-Disposition: form-data; name=\"uploadfile\"; filename=\"a.yaml\"\r\n\r\nabc", "", {
      "content-type": "multipart/form-data; boundary=xyz",
    });
    expect(res.status).toBe(400);
    expectApiStatus(res.json, Code.InvalidArgument, /Failed to read the uploaded pipeline/);
    expect(calls).toHaveLength(0);
  });

  it("answers 400 to multipart without a boundary", async () => {
    const res = await post("whatever", "", { "content-type": "multipart/form-data" });
    expect(res.status).toBe(400);
    expectApiStatus(res.json, Code.InvalidArgument, /Failed to read the uploaded pipeline/);
  });
});

describe("size limit", () => {
  it("answers 413 apiStatus to a file one byte over the limit", async () => {
    const res = await post(form([["uploadfile", new Blob([new Uint8Array(MAX_BYTES + 1)]), "big.yaml"]]));
    expect(res.status).toBe(413);
    expect(res.headers.get("content-type")).toBe("application/json");
    expectApiStatus(res.json, Code.ResourceExhausted, "File size too large. Maximum supported size: 33554432");
    expect(calls).toHaveLength(0);
  });

  it("answers while the client is still sending, without waiting for the whole body", async () => {
    // A multipart body that goes on for 256 MiB unless the answer comes first.
    const boundary = "boundary42";
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="uploadfile"; filename="huge.yaml"\r\n\r\n`;
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    const totalChunks = 256;
    const { status, json, sentChunks } = await new Promise<{ status: number; json: unknown; sentChunks: number }>(
      (resolve, reject) => {
        let sent = 0;
        let answered = false;
        const req = httpRequest(`${base}${uploadPath}`, {
          method: "POST",
          headers: { "content-type": `multipart/form-data; boundary=${boundary}`, "transfer-encoding": "chunked" },
        });
        req.on("error", (err) => (answered ? undefined : reject(err)));
        req.on("response", (res) => {
          answered = true;
          const at = sent;
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (d: string) => (text += d));
          res.on("end", () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(text), sentChunks: at });
          });
        });
        req.write(head);
        const pump = () => {
          while (!answered && sent < totalChunks) {
            sent++;
            if (!req.write(chunk)) return void req.once("drain", pump);
          }
          if (!answered) req.end(`\r\n--${boundary}--\r\n`);
        };
        pump();
      },
    );
    expect(status).toBe(413);
    expectApiStatus(json, Code.ResourceExhausted, /File size too large/);
    expect(sentChunks).toBeLessThan(totalChunks);
    expect(calls).toHaveLength(0);
  });
});

describe("errors from the call", () => {
  it.each([
    ["NotFound", notFound("Pipeline x not found."), 404],
    ["AlreadyExists", alreadyExists("The name p.yaml already exist. Please specify a new name."), 409],
    ["InvalidArgument", invalidArgument("Unexpected pipeline file format. Support .zip, .tar.gz or YAML."), 400],
    ["ResourceExhausted", apiError(Code.ResourceExhausted, "File size too large. Maximum supported size: 33554432"), 413],
  ])("maps %s to its HTTP status with an apiStatus body", async (_name, err, status) => {
    respond = () => {
      throw err;
    };
    const res = await post(form([["uploadfile", new Blob([yaml]), "p.yaml"]]));
    expect(res.status).toBe(status);
    expectApiStatus(res.json, err.code, err.rawMessage);
  });

  it("hides anything that is not a ConnectError behind a 500", async () => {
    respond = () => {
      throw new Error("database exploded at /var/lib/secret");
    };
    const res = await post(form([["uploadfile", new Blob([yaml]), "p.yaml"]]));
    expect(res.status).toBe(500);
    expectApiStatus(res.json, Code.Internal, "internal server error");
    expect(res.text).not.toContain("secret");
  });

  it("passes a ConnectError without details through with one", async () => {
    respond = () => {
      throw new ConnectError("no such pipeline", Code.NotFound);
    };
    const res = await post(form([["uploadfile", new Blob([yaml]), "p.yaml"]]));
    expect(res.status).toBe(404);
    expect(res.json.code).toBe(Code.NotFound);
  });
});

describe("beside the REST gateway", () => {
  it("leaves JSON bodies to the gateway", async () => {
    const res = await fetch(`${base}/apis/v1beta1/experiments`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "training", description: "first" }),
    });
    expect(res.status).toBe(200);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.method).toBe(ExperimentService.method.createExperiment);
    expect(toJson(calls[0]!.method.input, calls[0]!.input)).toEqual({ experiment: { name: "training", description: "first" } });
  });

  it("leaves multipart bodies on other paths to the gateway, which reads them as JSON", async () => {
    const res = await fetch(`${base}/apis/v1beta1/experiments`, { method: "POST", body: form([["a", "b"]]) });
    expect(res.status).toBe(400);
    expect(calls).toHaveLength(0);
  });

  it("leaves other methods on the upload path to the gateway", async () => {
    const res = await fetch(`${base}${uploadPath}`);
    expect(res.status).toBe(200);
    expect(calls[0]!.method).toBe(PipelineService.method.getPipeline);
    expect(toJson(calls[0]!.method.input, calls[0]!.input)).toEqual({ id: "upload" });
  });

});
