// api.ExperimentService, and the Default experiment that owns runs and jobs created without one.
import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { ExperimentSchema, type Experiment, type ExperimentService } from "../../../gen/proto/kfp/experiment_pb.js";
import { alreadyExists, invalidArgument, notFound } from "../../errors.js";
import { ExperimentNameTaken, type ExperimentRow, type ExperimentStore } from "../../store/pipelines/experiment-store.js";
import type { Lists } from "./lists.js";
import { nowMillis, toTimestamp } from "./timestamps.js";

export const defaultExperimentName = "Default";
const defaultExperimentDescription = "All runs created without specifying an experiment will be grouped here.";

export const experimentMessage = (row: ExperimentRow): Experiment =>
  create(ExperimentSchema, { id: row.id, name: row.name, description: row.description, createdAt: toTimestamp(row.createdAt) });

export class Experiments {
  constructor(private readonly store: ExperimentStore) {}

  async create(name: string, description: string): Promise<ExperimentRow> {
    if (name === "") throw invalidArgument("Experiment name is empty. Please specify a valid experiment name.");
    try {
      return await this.insert(name, description);
    } catch (err) {
      if (err instanceof ExperimentNameTaken) {
        throw alreadyExists(`Failed to create a new experiment. The name ${name} already exist. Please specify a new name.`);
      }
      throw err;
    }
  }

  async get(id: string): Promise<ExperimentRow> {
    const experiment = await this.store.byId(id);
    if (!experiment) throw notFound(`Experiment ${id} not found.`);
    return experiment;
  }

  /** The id of the Default experiment, created again if it was deleted. */
  async defaultId(): Promise<string> {
    for (;;) {
      const existing = await this.store.byName(defaultExperimentName);
      if (existing) return existing.id;
      try {
        return (await this.insert(defaultExperimentName, defaultExperimentDescription)).id;
      } catch (err) {
        // Another caller (or replica) created it first: read theirs.
        if (!(err instanceof ExperimentNameTaken)) throw err;
      }
    }
  }

  private insert(name: string, description: string): Promise<ExperimentRow> {
    return this.store.insert({ id: randomUUID(), name, description, createdAt: nowMillis() });
  }

  async delete(id: string): Promise<void> {
    if (!(await this.store.deleteAndDisableJobs(id, nowMillis()))) throw notFound(`Experiment ${id} not found.`);
  }
}

export function experimentService(experiments: Experiments, lists: Lists): ServiceImpl<typeof ExperimentService> {
  return {
    async createExperiment(req) {
      return experimentMessage(await experiments.create(req.experiment?.name ?? "", req.experiment?.description ?? ""));
    },
    async getExperiment(req) {
      return experimentMessage(await experiments.get(req.id));
    },
    async listExperiment(req) {
      const page = await lists.experiments(req);
      return { experiments: page.rows.map(experimentMessage), totalSize: page.totalSize, nextPageToken: page.nextPageToken };
    },
    async deleteExperiment(req) {
      await experiments.delete(req.id);
      return {};
    },
  };
}
