// Every REST error leaves as apiStatus JSON, whether a handler, the gateway or fastify raised it.
import { Code, ConnectError } from "@connectrpc/connect";
import type { FastifyReply, FastifyRequest } from "fastify";
import { apiError, apiStatusBody, httpStatusFromCode } from "../errors.js";

/**
 * Sends JSON as `application/json`, as the original gateway did. Sent as a Buffer, because
 * fastify appends "; charset=utf-8" to a JSON content type for string payloads.
 */
export function sendJson(reply: FastifyReply, status: number, json: unknown): FastifyReply {
  return reply.code(status).header("content-type", "application/json").send(Buffer.from(JSON.stringify(json)));
}

export function sendApiStatus(reply: FastifyReply, status: number, err: ConnectError): FastifyReply {
  return sendJson(reply, status, apiStatusBody(err));
}

/**
 * A fastify error handler: ConnectErrors map by code; fastify's own client errors (body too
 * large, bad Content-Length, a bad URL when used as `frameworkErrors`) keep their status;
 * anything else is logged and hidden behind a 500.
 */
export function replyWithApiStatus(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof ConnectError) return sendApiStatus(reply, httpStatusFromCode(err.code), err);
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    // gRPC's code for a message over the size limit is ResourceExhausted.
    const code = status === 413 ? Code.ResourceExhausted : Code.InvalidArgument;
    return sendApiStatus(reply, status, apiError(code, (err as Error).message));
  }
  request.log.error({ err }, "REST gateway failure");
  return sendApiStatus(reply, 500, apiError(Code.Internal, "internal server error"));
}
