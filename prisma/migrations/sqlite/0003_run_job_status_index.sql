-- The scheduler counts each job's unfinished runs on every pass (max_concurrency).
CREATE INDEX "run_job_id_status_idx" ON "run" ("job_id", "status");
