// The four List RPCs over the shared list machinery: which rows, in what scope, which columns.
import type { ResourceKey } from "../../../gen/proto/kfp/resource_reference_pb.js";
import { ResourceType } from "../../../gen/proto/kfp/resource_reference_pb.js";
import type { Database } from "../../store/database.js";
import { experimentList, jobList, listPage, pipelineList, runList, type ListPage, type ListRequest } from "../../store/listing/index.js";
import type { ExperimentRow } from "../../store/pipelines/experiment-store.js";
import type { JobRow } from "../../store/pipelines/job-store.js";
import type { PipelineRow } from "../../store/pipelines/pipeline-store.js";
import type { RunRow } from "../../store/pipelines/run-store.js";
import { ownerFilter } from "./references.js";

type ListByOwner = ListRequest & { resourceReferenceKey?: ResourceKey };

export class Lists {
  constructor(private readonly db: Database) {}

  experiments(request: ListRequest): Promise<ListPage<ExperimentRow>> {
    return listPage<ExperimentRow>(this.db, experimentList, request);
  }

  /** Pipelines without their templates, which only GetTemplate returns. */
  pipelines(request: ListRequest): Promise<ListPage<PipelineRow>> {
    return listPage<PipelineRow>(this.db, pipelineList, request, { omit: { template: true } });
  }

  /** Runs without their runtime manifests, which only GetRun returns. */
  runs(request: ListByOwner): Promise<ListPage<Omit<RunRow, "runtimeManifest">>> {
    const scope = { ...ownerFilter(request.resourceReferenceKey, [ResourceType.EXPERIMENT, ResourceType.JOB]) };
    return listPage(this.db, runList, request, { scope, omit: { runtimeManifest: true } });
  }

  jobs(request: ListByOwner): Promise<ListPage<JobRow>> {
    const scope = { ...ownerFilter(request.resourceReferenceKey, [ResourceType.EXPERIMENT]) };
    return listPage<JobRow>(this.db, jobList, request, { scope });
  }
}
