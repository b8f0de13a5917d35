// The listable resources of the pipelines API: their sortable/filterable keys (kfp-behavior.md
// §5.1), tables and the scopes their callers use.
import type { ListField, ListSpec } from "./types.js";

const id: ListField = { column: "id", type: "string" };
const name: ListField = { column: "name", type: "string" };
// Experiment and pipeline names are UNIQUE (experiment_name_key, pipeline_name_key).
const uniqueName: ListField = { ...name, unique: true };
const description: ListField = { column: "description", type: "string" };
const createdAt: ListField = { column: "created_at", type: "millis" };

export const experimentList: ListSpec = {
  resource: "experiment",
  model: "experiment",
  table: "experiment",
  fields: { id, name: uniqueName, created_at: createdAt, description },
  defaultSort: "created_at",
  scopes: {},
};

// Filters apply to pipelines too (DECISIONS.md), unlike KFP 0.1.23.
export const pipelineList: ListSpec = {
  resource: "pipeline",
  model: "pipeline",
  table: "pipeline",
  fields: { id, name: uniqueName, created_at: createdAt, description },
  defaultSort: "created_at",
  scopes: {},
};

export const runList: ListSpec = {
  resource: "run",
  model: "run",
  table: "run",
  fields: {
    id,
    name,
    created_at: createdAt,
    description,
    scheduled_at: { column: "scheduled_at", type: "millis" },
    storage_state: { column: "storage_state", type: "storageState" },
  },
  defaultSort: "created_at",
  scopes: { experimentId: "experiment_id", jobId: "job_id", pipelineId: "pipeline_id", storageState: "storage_state" },
};

export const jobList: ListSpec = {
  resource: "job",
  model: "job",
  table: "job",
  fields: { id, name, created_at: createdAt, package_id: { column: "pipeline_id", type: "string", nullable: true } },
  defaultSort: "created_at",
  scopes: { experimentId: "experiment_id", pipelineId: "pipeline_id" },
};
