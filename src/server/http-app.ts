// The HTTP port: REST (the google.api.http bindings), Connect and gRPC-Web, and health checks.
import { fastifyConnectPlugin } from "@connectrpc/connect-fastify";
import fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { maxPackageBytes } from "../services/pipelines/pipeline-package.js";
import { replyWithApiStatus, restGateway } from "../transcoding/index.js";
import type { CallPipeline } from "./call-pipeline.js";
import { uploadRoute } from "./upload-route.js";

// Run and job manifests can be large; the same cap as for pipeline packages.
export const maxBodyBytes = maxPackageBytes;

/** One info line per request, written when it completes, instead of fastify's two. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) };
    if (error) request.log.error({ ...line, err: error }, "request failed");
    else request.log.info(line, "request");
  }
}

// What the original server reported as its build; ours comes from the environment when set.
const commitSha = process.env.COMMIT_SHA ?? "unknown";

export interface HttpAppOptions {
  pipeline: CallPipeline;
  log: FastifyBaseLogger;
  isReady: () => boolean;
}

export async function buildHttpApp({ pipeline, log, isReady }: HttpAppOptions): Promise<FastifyInstance> {
  const app = fastify({
    loggerInstance: log,
    logController: new OneLinePerRequest(),
    // Malformed URLs (bad percent-encoding) are rejected by the router; answer them as apiStatus too.
    frameworkErrors: replyWithApiStatus,
    bodyLimit: maxBodyBytes,
    // Without this, close() waits for idle keep-alive clients; in-flight requests still finish.
    forceCloseConnections: "idle",
  });
  const health = async (_request: FastifyRequest, reply: FastifyReply) =>
    isReady() ? { status: "SERVING", commit_sha: commitSha } : reply.code(503).send({ status: "NOT_SERVING" });
  app.get("/healthz", health);
  // The original API server's health path, which KFP clients and the UI call.
  app.get("/apis/v1beta1/healthz", health);
  await app.register(fastifyConnectPlugin, { routes: (router) => pipeline.registerConnectRoutes(router) });
  await app.register(uploadRoute, { pipeline, maxBytes: maxPackageBytes });
  await app.register(restGateway, { pipeline, bodyLimit: maxBodyBytes });
  return app;
}
