// The pipelines services (experiments, pipelines and uploads, runs, jobs) over one database.
import type { Logger } from "pino";
import { ExperimentService } from "../../../gen/proto/kfp/experiment_pb.js";
import { JobService } from "../../../gen/proto/kfp/job_pb.js";
import { PipelineService } from "../../../gen/proto/kfp/pipeline_pb.js";
import { PipelineUploadService } from "../../../gen/proto/kfp/pipeline_upload_pb.js";
import { RunService } from "../../../gen/proto/kfp/run_pb.js";
import type { ArtifactStore } from "../../artifacts/store.js";
import type { WorkflowEngine } from "../../engine/engine.js";
import { LocalEngine } from "../../engine/local/local-engine.js";
import { bindService, type ServiceBinding } from "../../server/call-pipeline.js";
import type { Database } from "../../store/database.js";
import { ExperimentStore } from "../../store/pipelines/experiment-store.js";
import { JobStore } from "../../store/pipelines/job-store.js";
import { PipelineStore } from "../../store/pipelines/pipeline-store.js";
import { RunStore } from "../../store/pipelines/run-store.js";
import type { MetadataDomain } from "../metadata/index.js";
import { experimentService, Experiments } from "./experiments.js";
import { jobService, Jobs } from "./jobs.js";
import { Lists } from "./lists.js";
import { pipelineService, Pipelines, pipelineUploadService } from "./pipelines.js";
import { RunRecorder } from "./run-recorder.js";
import { runService, Runs } from "./runs.js";
import { StepLineage } from "./step-lineage.js";

export interface PipelinesDomain {
  engine: WorkflowEngine;
  experiments: Experiments;
  pipelines: Pipelines;
  runs: Runs;
  jobs: Jobs;
  lists: Lists;
}

export interface EngineSettings {
  /** Steps' scratch space. */
  scratchRoot: string;
  maxConcurrentSteps: number;
}

/** Where runs' steps are recorded as executions, artifacts and events (see step-lineage.ts). */
export interface LineageSettings {
  metadata: MetadataDomain;
  /** Recording failures are logged here; they do not fail runs. */
  log: Logger;
}

export function pipelinesDomain(
  db: Database,
  artifacts: ArtifactStore,
  engineSettings: EngineSettings,
  lineage?: LineageSettings,
): PipelinesDomain {
  const pipelineStore = new PipelineStore(db.prisma);
  const runStore = new RunStore(db.prisma);
  const experiments = new Experiments(new ExperimentStore(db.prisma));
  const recorder = new RunRecorder(runStore, lineage && new StepLineage(lineage.metadata, artifacts, lineage.log));
  const engine = new LocalEngine({ artifacts, ...engineSettings, listener: recorder, ledger: recorder });
  return {
    engine,
    experiments,
    pipelines: new Pipelines(pipelineStore),
    runs: new Runs(runStore, pipelineStore, experiments, artifacts, engine),
    jobs: new Jobs(new JobStore(db.prisma), pipelineStore, experiments),
    lists: new Lists(db),
  };
}

export function pipelinesBindings(d: PipelinesDomain): ServiceBinding[] {
  return [
    bindService(ExperimentService, experimentService(d.experiments, d.lists)),
    bindService(PipelineService, pipelineService(d.pipelines, d.lists)),
    bindService(PipelineUploadService, pipelineUploadService(d.pipelines)),
    bindService(RunService, runService(d.runs, d.lists)),
    bindService(JobService, jobService(d.jobs, d.lists)),
  ];
}
