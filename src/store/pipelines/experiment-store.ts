// Experiments. Deleting one keeps its runs and disables its jobs.
import type { Experiment } from "../../../gen/prisma/sqlite/client.js";
import type { Prisma } from "../database.js";
import { prismaErrorKind } from "../prisma-errors.js";

export type ExperimentRow = Experiment;

/** Thrown by insert when the name is taken. */
export class ExperimentNameTaken extends Error {}

export class ExperimentStore {
  constructor(private readonly prisma: Prisma) {}

  async insert(row: ExperimentRow): Promise<ExperimentRow> {
    try {
      return await this.prisma.experiment.create({ data: row });
    } catch (err) {
      if (prismaErrorKind(err) === "unique") throw new ExperimentNameTaken(row.name);
      throw err;
    }
  }

  async byId(id: string): Promise<ExperimentRow | undefined> {
    return (await this.prisma.experiment.findUnique({ where: { id } })) ?? undefined;
  }

  async byName(name: string): Promise<ExperimentRow | undefined> {
    return (await this.prisma.experiment.findUnique({ where: { name } })) ?? undefined;
  }

  /** Deletes the experiment and disables its jobs in one transaction; false when missing. */
  async deleteAndDisableJobs(id: string, now: bigint): Promise<boolean> {
    const [, deleted] = await this.prisma.$transaction([
      this.prisma.job.updateMany({
        where: { experimentId: id, enabled: true },
        data: { enabled: false, status: "Disabled", updatedAt: now },
      }),
      this.prisma.experiment.deleteMany({ where: { id } }),
    ]);
    return deleted.count === 1;
  }
}
