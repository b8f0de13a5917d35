// Runs and their metrics.
import type { Run, RunMetric } from "../../../gen/prisma/sqlite/client.js";
import type { Prisma } from "../database.js";
import { prismaErrorKind } from "../prisma-errors.js";

export type RunRow = Run;
export type RunMetricRow = RunMetric;

export class RunStore {
  constructor(private readonly prisma: Prisma) {}

  async insert(row: RunRow): Promise<RunRow> {
    return this.prisma.run.create({ data: row });
  }

  async byId(id: string): Promise<RunRow | undefined> {
    return (await this.prisma.run.findUnique({ where: { id } })) ?? undefined;
  }

  async exists(id: string): Promise<boolean> {
    return (await this.prisma.run.count({ where: { id } })) === 1;
  }

  async setStorageState(id: string, storageState: number): Promise<boolean> {
    return (await this.prisma.run.updateMany({ where: { id }, data: { storageState } })).count === 1;
  }

  /** Moves the run to `to` only from one of `from`; false when its status was something else. */
  async transitionStatus(id: string, from: readonly string[], to: string): Promise<boolean> {
    const { count } = await this.prisma.run.updateMany({ where: { id, status: { in: [...from] } }, data: { status: to } });
    return count === 1;
  }

  /** Deletes the run; its metrics go with it (foreign key cascade). */
  async delete(id: string): Promise<boolean> {
    return (await this.prisma.run.deleteMany({ where: { id } })).count === 1;
  }

  /** Metrics of several runs, grouped by run id, each run's in (node, name) order. */
  async metricsOf(runIds: readonly string[]): Promise<Map<string, RunMetricRow[]>> {
    const rows = await this.prisma.runMetric.findMany({
      where: { runId: { in: [...runIds] } },
      orderBy: [{ runId: "asc" }, { nodeId: "asc" }, { name: "asc" }],
    });
    const byRun = new Map<string, RunMetricRow[]>();
    for (const row of rows) byRun.set(row.runId, [...(byRun.get(row.runId) ?? []), row]);
    return byRun;
  }

  /** Stores one metric; "duplicate" when (run, node, name) was reported before (first report wins). */
  async insertMetric(row: RunMetricRow): Promise<"ok" | "duplicate"> {
    try {
      await this.prisma.runMetric.create({ data: row });
      return "ok";
    } catch (err) {
      if (prismaErrorKind(err) === "unique") return "duplicate";
      throw err;
    }
  }
}
