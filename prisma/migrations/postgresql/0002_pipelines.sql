-- Pipelines service tables: experiments, pipelines, runs with their metrics, jobs.
-- Times are epoch milliseconds.

CREATE TABLE "experiment" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "name" TEXT NOT NULL,
  "description" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL
);
CREATE UNIQUE INDEX "experiment_name_key" ON "experiment" ("name");
CREATE INDEX "experiment_created_at_id_idx" ON "experiment" ("created_at", "id");
CREATE INDEX "experiment_description_id_idx" ON "experiment" ("description", "id");

CREATE TABLE "pipeline" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "name" TEXT NOT NULL,
  "description" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL,
  "parameters" TEXT NOT NULL,
  "template" TEXT NOT NULL
);
CREATE UNIQUE INDEX "pipeline_name_key" ON "pipeline" ("name");
CREATE INDEX "pipeline_created_at_id_idx" ON "pipeline" ("created_at", "id");
CREATE INDEX "pipeline_description_id_idx" ON "pipeline" ("description", "id");

CREATE TABLE "run" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "name" TEXT NOT NULL,
  "description" TEXT NOT NULL,
  "storage_state" INTEGER NOT NULL,
  "experiment_id" TEXT NOT NULL,
  "job_id" TEXT,
  "pipeline_id" TEXT,
  "workflow_manifest" TEXT NOT NULL,
  "parameters" TEXT NOT NULL,
  "runtime_manifest" TEXT NOT NULL,
  "status" TEXT NOT NULL,
  "error" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL,
  "scheduled_at" BIGINT NOT NULL,
  "finished_at" BIGINT
);
CREATE INDEX "run_created_at_id_idx" ON "run" ("created_at", "id");
CREATE INDEX "run_name_id_idx" ON "run" ("name", "id");
CREATE INDEX "run_description_id_idx" ON "run" ("description", "id");
CREATE INDEX "run_scheduled_at_id_idx" ON "run" ("scheduled_at", "id");
CREATE INDEX "run_storage_state_id_idx" ON "run" ("storage_state", "id");
CREATE INDEX "run_experiment_id_created_at_id_idx" ON "run" ("experiment_id", "created_at", "id");
CREATE INDEX "run_experiment_id_name_id_idx" ON "run" ("experiment_id", "name", "id");
CREATE INDEX "run_job_id_created_at_id_idx" ON "run" ("job_id", "created_at", "id");
CREATE INDEX "run_status_idx" ON "run" ("status");

CREATE TABLE "run_metric" (
  "run_id" TEXT NOT NULL REFERENCES "run" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "node_id" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "number_value" DOUBLE PRECISION NOT NULL,
  "format" INTEGER NOT NULL,
  PRIMARY KEY ("run_id", "node_id", "name")
);

CREATE TABLE "job" (
  "id" TEXT NOT NULL PRIMARY KEY,
  "name" TEXT NOT NULL,
  "description" TEXT NOT NULL,
  "experiment_id" TEXT NOT NULL,
  "pipeline_id" TEXT,
  "workflow_manifest" TEXT NOT NULL,
  "parameters" TEXT NOT NULL,
  "max_concurrency" INTEGER NOT NULL,
  "cron" TEXT,
  "interval_second" BIGINT,
  "start_time" BIGINT,
  "end_time" BIGINT,
  "enabled" BOOLEAN NOT NULL,
  "no_catchup" BOOLEAN NOT NULL,
  "status" TEXT NOT NULL,
  "created_at" BIGINT NOT NULL,
  "updated_at" BIGINT NOT NULL,
  "fired_count" INTEGER NOT NULL,
  "last_scheduled_at" BIGINT
);
CREATE INDEX "job_created_at_id_idx" ON "job" ("created_at", "id");
CREATE INDEX "job_name_id_idx" ON "job" ("name", "id");
CREATE INDEX "job_pipeline_id_id_idx" ON "job" ("pipeline_id", "id");
CREATE INDEX "job_experiment_id_created_at_id_idx" ON "job" ("experiment_id", "created_at", "id");
CREATE INDEX "job_enabled_idx" ON "job" ("enabled");
