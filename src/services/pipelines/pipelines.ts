// api.PipelineService and api.PipelineUploadService: packages from a URL or an upload become
// stored pipelines; the template is kept exactly as it came.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { PipelineSchema, type Pipeline, type PipelineService } from "../../../gen/proto/kfp/pipeline_pb.js";
import type { PipelineUploadService } from "../../../gen/proto/kfp/pipeline_upload_pb.js";
import { alreadyExists, invalidArgument, notFound } from "../../errors.js";
import { PipelineNameTaken, type PipelineRow, type PipelineStore } from "../../store/pipelines/pipeline-store.js";
import type { Lists } from "./lists.js";
import { downloadPipelinePackage } from "./pipeline-download.js";
import { extractWorkflowText } from "./pipeline-package.js";
import { nowMillis, toTimestamp } from "./timestamps.js";
import { parseWorkflow, workflowParameters } from "./workflow.js";

const maxNameLength = 100;

export const pipelineMessage = (row: PipelineRow): Pipeline =>
  create(PipelineSchema, {
    id: row.id,
    createdAt: toTimestamp(row.createdAt),
    name: row.name,
    description: row.description,
    parameters: JSON.parse(row.parameters) as { name: string; value?: string }[],
  });

export interface PipelinePackage {
  fileName: string;
  bytes: Uint8Array;
  /** Defaults to the file name, extension kept. */
  name: string;
  description: string;
}

export class Pipelines {
  constructor(
    private readonly store: PipelineStore,
    private readonly download: typeof downloadPipelinePackage = downloadPipelinePackage,
  ) {}

  async add(pkg: PipelinePackage): Promise<PipelineRow> {
    const name = pkg.name || pkg.fileName;
    if (name === "") throw invalidArgument("a pipeline needs a name: give one or a file name");
    if (name.length > maxNameLength) {
      throw invalidArgument(`Pipeline name too long. Support maximum length of ${maxNameLength}`);
    }
    const template = await extractWorkflowText(pkg.fileName, pkg.bytes);
    const parameters = workflowParameters(parseWorkflow(template));
    try {
      return await this.store.insert({
        id: randomUUID(),
        name,
        description: pkg.description,
        createdAt: nowMillis(),
        parameters: JSON.stringify(parameters),
        template,
      });
    } catch (err) {
      if (err instanceof PipelineNameTaken) {
        throw alreadyExists(`Failed to create a new pipeline. The name ${name} already exist. Please specify a new name.`);
      }
      throw err;
    }
  }

  async createFromUrl(url: string, name: string, description: string): Promise<PipelineRow> {
    if (url === "") throw invalidArgument("Pipeline URL is empty. Please specify a valid URL.");
    const { fileName, bytes } = await this.download(url);
    return this.add({ fileName, bytes, name, description });
  }

  async get(id: string): Promise<PipelineRow> {
    const pipeline = await this.store.byId(id);
    if (!pipeline) throw notFound(`Pipeline ${id} not found.`);
    return pipeline;
  }

  async delete(id: string): Promise<void> {
    if (!(await this.store.delete(id))) throw notFound(`Pipeline ${id} not found.`);
  }
}

export function pipelineService(pipelines: Pipelines, lists: Lists): ServiceImpl<typeof PipelineService> {
  return {
    async createPipeline(req) {
      const p = req.pipeline;
      return pipelineMessage(await pipelines.createFromUrl(p?.url?.pipelineUrl ?? "", p?.name ?? "", p?.description ?? ""));
    },
    async getPipeline(req) {
      return pipelineMessage(await pipelines.get(req.id));
    },
    async listPipelines(req) {
      const page = await lists.pipelines(req);
      return { pipelines: page.rows.map(pipelineMessage), totalSize: page.totalSize, nextPageToken: page.nextPageToken };
    },
    async deletePipeline(req) {
      await pipelines.delete(req.id);
      return {};
    },
    async getTemplate(req) {
      return { template: (await pipelines.get(req.id)).template };
    },
  };
}

export function pipelineUploadService(pipelines: Pipelines): ServiceImpl<typeof PipelineUploadService> {
  return {
    async uploadPipeline(req) {
      return pipelineMessage(
        await pipelines.add({ fileName: req.fileName, bytes: req.file, name: req.name, description: req.description }),
      );
    },
  };
}
