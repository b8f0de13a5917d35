// The REST gateway: serves every google.api.http binding of the pipeline's services over
// fastify, with the call itself going through the shared CallPipeline.
import { Code } from "@connectrpc/connect";
import type { Registry } from "@bufbuild/protobuf";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { apiError, invalidArgument, notFound } from "../errors.js";
import type { CallInfo, CallPipeline } from "../server/call-pipeline.js";
import { replyWithApiStatus, sendApiStatus, sendJson } from "./error-reply.js";
import { splitPath } from "./path-template.js";
import { buildRequestMessage } from "./request-message.js";
import { responseJson } from "./response-json.js";
import { openApiDocument } from "./openapi.js";
import { RouteTable } from "./route-table.js";

export { listHttpBindings, RouteTable, type HttpBinding, type Route, type RouteLookup } from "./route-table.js";
export { replyWithApiStatus } from "./error-reply.js";

export interface RestGatewayOptions {
  pipeline: Pick<CallPipeline, "services" | "call">;
  /** Largest accepted request body, in bytes; larger ones get 413. */
  bodyLimit: number;
  /** For google.protobuf.Any in bodies and responses. */
  registry?: Registry;
}

// Served even without a binding, so that they get 405 rather than fastify's 404.
const COMMON_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

/**
 * A fastify plugin; register it with `app.register(restGateway, opts)` (not wrapped in
 * fastify-plugin): it replaces the content-type parsers, which must stay inside its scope.
 * Other routes on the app take precedence over its catch-all route.
 */
export async function restGateway(scope: FastifyInstance, opts: RestGatewayOptions): Promise<void> {
  const table = new RouteTable(opts.pipeline.services);

  // Bodies are JSON whatever the Content-Type says, as with the original gateway.
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser("*", { parseAs: "buffer", bodyLimit: opts.bodyLimit }, (_request, body, done) =>
    done(null, body),
  );
  scope.setErrorHandler(replyWithApiStatus);

  // The same routes, described for REST client generators.
  const openApi = openApiDocument(table.routes, { title: "Pipewright", version: "v1" });
  scope.get("/openapi.json", async () => openApi);

  scope.route({
    method: [...new Set([...COMMON_METHODS, ...table.routes.map((r) => r.httpMethod)])],
    url: "/*",
    exposeHeadRoute: false,
    bodyLimit: opts.bodyLimit,
    handler: async (request, reply) => {
      const queryStart = request.url.indexOf("?");
      const rawPath = queryStart < 0 ? request.url : request.url.slice(0, queryStart);
      const query = new URLSearchParams(queryStart < 0 ? "" : request.url.slice(queryStart + 1));
      let segments: string[];
      try {
        segments = splitPath(rawPath);
      } catch {
        throw invalidArgument(`malformed percent-encoding in path ${rawPath}`);
      }

      const found = table.lookup(request.method, segments);
      if (found.kind === "notFound") throw notFound(`no route for ${request.method} ${rawPath}`);
      if (found.kind === "methodNotAllowed") {
        reply.header("allow", found.allow.join(", "));
        const err = apiError(Code.Unimplemented, `method ${request.method} not allowed for ${rawPath}`);
        return sendApiStatus(reply, 405, err);
      }

      const { route, pathParams } = found;
      const body = Buffer.isBuffer(request.body) ? request.body : undefined;
      const input = buildRequestMessage(route, { pathParams, query, body }, opts.registry);
      const output = await opts.pipeline.call(route.method, input, callInfo(request, reply));
      return sendJson(reply, 200, responseJson(route.method.output, output, opts.registry));
    },
  });
}

/** What the call pipeline is told about a REST request; its signal aborts when the client goes away. */
export function callInfo(request: FastifyRequest, reply: FastifyReply): CallInfo {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (name.startsWith(":")) continue; // HTTP/2 pseudo-headers are not valid header names
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, v);
  }
  // The response closing before it was fully written means the client went away.
  const abort = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  return {
    protocolName: "rest",
    requestMethod: request.method,
    url: `${request.protocol}://${request.host}${request.url}`,
    headers,
    signal: abort.signal,
  };
}
