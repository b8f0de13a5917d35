// Pipelines: the stored workflow file and its parameters.
import type { Pipeline } from "../../../gen/prisma/sqlite/client.js";
import type { Prisma } from "../database.js";
import { prismaErrorKind } from "../prisma-errors.js";

export type PipelineRow = Pipeline;

/** Thrown by insert when the name is taken. */
export class PipelineNameTaken extends Error {}

export class PipelineStore {
  constructor(private readonly prisma: Prisma) {}

  async insert(row: PipelineRow): Promise<PipelineRow> {
    try {
      return await this.prisma.pipeline.create({ data: row });
    } catch (err) {
      if (prismaErrorKind(err) === "unique") throw new PipelineNameTaken(row.name);
      throw err;
    }
  }

  async byId(id: string): Promise<PipelineRow | undefined> {
    return (await this.prisma.pipeline.findUnique({ where: { id } })) ?? undefined;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.prisma.pipeline.deleteMany({ where: { id } })).count === 1;
  }
}
