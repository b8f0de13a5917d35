// Composes the process: storage, domain services, the call pipeline and both ports.
import { join } from "node:path";
import { pino, type Logger } from "pino";
import { MetadataService } from "../../gen/proto/metadata/service_pb.js";
import { FilesystemArtifactStore } from "../artifacts/store.js";
import type { Config } from "../config.js";
import { createGrpcServer, listenGrpc, shutdownGrpc } from "../grpc/server.js";
import { metadataDomain, metadataService, registerMetadataDefaults } from "../services/metadata/index.js";
import { Scheduler } from "../scheduler/scheduler.js";
import { pipelinesBindings, pipelinesDomain } from "../services/pipelines/index.js";
import { openDatabase } from "../store/database.js";
import { bearerAuthenticator } from "./auth.js";
import { bindService, CallPipeline } from "./call-pipeline.js";
import { buildHttpApp } from "./http-app.js";

export interface RunningServer {
  httpUrl: string;
  grpcAddress: string;
  log: Logger;
  /** Stops accepting, lets in-flight calls finish, closes storage. */
  close(): Promise<void>;
}

const shutdownGraceMs = 10_000;

export async function startPipewright(config: Config): Promise<RunningServer> {
  let ready = false;
  const log = pino({ level: config.logLevel });
  const db = await openDatabase(config.databaseUrl);
  const metadata = metadataDomain(db);
  await registerMetadataDefaults(metadata);
  const pipelines = pipelinesDomain(
    db,
    new FilesystemArtifactStore(join(config.dataDir, "artifacts")),
    { scratchRoot: join(config.dataDir, "work"), maxConcurrentSteps: config.maxConcurrentSteps },
    { metadata, log: log.child({ component: "lineage" }) },
  );
  await pipelines.experiments.defaultId();
  const scheduler = new Scheduler({
    db,
    log: log.child({ component: "scheduler" }),
    onRunCreated: async (row) => {
      await pipelines.runs.launch(row);
    },
  });
  pipelines.jobs.onScheduleChange(() => scheduler.wake());

  const pipeline = new CallPipeline(
    [
      bindService(MetadataService, metadataService(metadata)),
      ...pipelinesBindings(pipelines),
    ],
    bearerAuthenticator(config.authTokens),
    (err) => log.error({ err }, "internal error"),
  );
  const app = await buildHttpApp({ pipeline, log, isReady: () => ready });
  const grpcServer = createGrpcServer(pipeline);
  try {
    await app.listen({ host: config.host, port: config.port });
    const grpcPort = await listenGrpc(grpcServer, config.host, config.grpcPort);
    const { port } = app.server.address() as { port: number };
    await pipelines.engine.recover();
    scheduler.start();
    ready = true;
    const host = config.host.includes(":") ? `[${config.host}]` : config.host;
    log.info({ http: port, grpc: grpcPort, database: db.provider }, "pipewright ready");
    return {
      httpUrl: `http://${host}:${port}`,
      grpcAddress: `${host}:${grpcPort}`,
      log,
      async close() {
        ready = false;
        await Promise.all([app.close(), shutdownGrpc(grpcServer, shutdownGraceMs)]);
        await scheduler.stop();
        await pipelines.engine.close();
        await db.close();
      },
    };
  } catch (err) {
    grpcServer.forceShutdown();
    await app.close();
    await db.close();
    throw err;
  }
}
