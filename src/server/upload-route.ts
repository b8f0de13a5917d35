// POST /apis/v1beta1/pipelines/upload: the multipart form the KFP UI and SDK send (the file in
// field `uploadfile`, `name` and `description` in the query), turned into an
// api.PipelineUploadService/UploadPipeline call through the shared call pipeline.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import multipart from "@fastify/multipart";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { PipelineSchema, type Pipeline } from "../../gen/proto/kfp/pipeline_pb.js";
import { PipelineUploadService, UploadPipelineRequestSchema } from "../../gen/proto/kfp/pipeline_upload_pb.js";
import { apiError, invalidArgument } from "../errors.js";
import { fileTooLarge } from "../services/pipelines/pipeline-package.js";
import { sendApiStatus, sendJson } from "../transcoding/error-reply.js";
import { callInfo, replyWithApiStatus } from "../transcoding/index.js";
import { responseJson } from "../transcoding/response-json.js";
import type { CallPipeline } from "./call-pipeline.js";

export const uploadPath = "/apis/v1beta1/pipelines/upload";
export const uploadField = "uploadfile";

export interface UploadRouteOptions {
  pipeline: Pick<CallPipeline, "call">;
  /** The largest file accepted, in bytes; one byte more gets 413. */
  maxBytes: number;
}

/**
 * A fastify plugin; register it with `app.register(uploadRoute, opts)`, not wrapped in
 * fastify-plugin: its content-type parsers (multipart, and a catch-all that leaves other bodies
 * unread) must stay inside its own scope.
 */
export async function uploadRoute(scope: FastifyInstance, opts: UploadRouteOptions): Promise<void> {
  scope.removeAllContentTypeParsers();
  await scope.register(multipart, {
    // Busboy stops storing a file past fileSize and marks it truncated: nothing is buffered
    // beyond maxBytes. The other limits bound the parts a form may carry besides the file.
    limits: { fileSize: opts.maxBytes, files: 16, fields: 64, parts: 100, fieldSize: 64 * 1024 },
  });
  // Any other body is answered 400 by the handler, unread.
  scope.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  scope.setErrorHandler((err, request, reply) =>
    // A file too large is 413 here, not the 429 ResourceExhausted maps to elsewhere.
    err instanceof ConnectError && err.code === Code.ResourceExhausted
      ? sendApiStatus(reply, 413, err)
      : replyWithApiStatus(err, request, reply),
  );

  scope.post(uploadPath, async (request, reply) => {
    const { fileName, bytes } = await readUploadedFile(request, opts.maxBytes);
    const input = create(UploadPipelineRequestSchema, {
      file: bytes,
      fileName,
      // Percent-decoded once, by the query parser, and not a second time as the original did.
      name: firstQueryValue(request, "name"),
      description: firstQueryValue(request, "description"),
    });
    const output = await opts.pipeline.call<Pipeline>(
      PipelineUploadService.method.uploadPipeline,
      input,
      callInfo(request, reply),
    );
    return sendJson(reply, 200, responseJson(PipelineSchema, output));
  });
}

function firstQueryValue(request: FastifyRequest, key: string): string {
  const value = (request.query as Record<string, unknown> | undefined)?.[key];
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" ? first : "";
}

/** The first file in field `uploadfile`, read with a hard cap. Other parts are skipped. */
async function readUploadedFile(
  request: FastifyRequest,
  maxBytes: number,
): Promise<{ fileName: string; bytes: Uint8Array }> {
  if (!request.isMultipart()) {
    throw invalidArgument(
      `Failed to read the uploaded pipeline: the request must be multipart/form-data with the file in the field ${uploadField}.`,
    );
  }
  try {
    for await (const part of request.parts()) {
      if (part.type !== "file") continue;
      if (part.fieldname !== uploadField) {
        await discard(part.file);
        continue;
      }
      const bytes = await readCapped(part.file, maxBytes);
      if (bytes === undefined) throw fileTooLarge(maxBytes);
      return { fileName: part.filename, bytes };
    }
  } catch (err) {
    if (err instanceof ConnectError) throw err;
    const { statusCode, code, message } = err as { statusCode?: number; code?: string; message?: string };
    if (code === "FST_REQ_FILE_TOO_LARGE") throw fileTooLarge(maxBytes);
    // Too many parts, files or fields.
    if (statusCode === 413) throw apiError(Code.ResourceExhausted, `Failed to read the uploaded pipeline: ${message}`);
    throw invalidArgument(`Failed to read the uploaded pipeline: ${message ?? String(err)}`);
  } finally {
    // The rest of the body, whatever it holds, is read and dropped without parsing it.
    request.raw.unpipe();
    request.raw.resume();
  }
  throw invalidArgument(`Failed to read the uploaded pipeline: no file in the field ${uploadField}.`);
}

/**
 * The stream's bytes, or undefined as soon as it proves larger than maxBytes: busboy's 'limit'
 * comes when the part goes past the cap, long before the part (and its discarded rest) ends.
 */
function readCapped(stream: Readable & { truncated?: boolean }, maxBytes: number): Promise<Uint8Array | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const overflow = () => {
      stream.destroy();
      resolve(undefined);
    };
    stream.on("data", (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) overflow();
      else chunks.push(chunk);
    });
    stream.once("limit", overflow);
    stream.once("end", () => (stream.truncated ? resolve(undefined) : resolve(Buffer.concat(chunks, total))));
    stream.once("error", reject);
  });
}

async function discard(stream: Readable): Promise<void> {
  stream.resume();
  await finished(stream);
}
