// Runs and their metrics.
import type { Prisma as PrismaTypes, Run, RunMetric } from "../../../gen/prisma/sqlite/client.js";
import type { Prisma } from "../database.js";
import type { Provider } from "../migrate.js";
import { SqlParameters } from "../sql-parameters.js";
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

  /**
   * Records what the engine reports. A status that is not final never replaces Terminating: the
   * stop was asked for, and the engine's final report will end it.
   */
  async recordProgress(id: string, progress: { runtimeManifest: string; status: string; final: boolean; finishedAt?: bigint }): Promise<void> {
    const finishedAt = progress.finishedAt ?? null;
    if (progress.final) {
      await this.prisma.run.updateMany({ where: { id }, data: { runtimeManifest: progress.runtimeManifest, status: progress.status, finishedAt } });
      return;
    }
    await this.prisma.$transaction([
      this.prisma.run.updateMany({ where: { id }, data: { runtimeManifest: progress.runtimeManifest } }),
      this.prisma.run.updateMany({ where: { id, status: { not: "Terminating" } }, data: { status: progress.status } }),
    ]);
  }

  /** Runs in one of the statuses, with their runtime manifests (for recovery). */
  async withStatus(statuses: readonly string[]): Promise<Array<{ id: string; status: string; runtimeManifest: string }>> {
    return this.prisma.run.findMany({ where: { status: { in: [...statuses] } }, select: { id: true, status: true, runtimeManifest: true } });
  }

  /** Of the given runs, those whose status is `status`. */
  async idsWithStatus(ids: readonly string[], status: string): Promise<string[]> {
    const rows = await this.prisma.run.findMany({ where: { id: { in: [...ids] }, status }, select: { id: true } });
    return rows.map((r) => r.id);
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

  // ---- For the scheduler.

  /**
   * Inserts several runs with one INSERT per 100 rows, in the given transaction when there is
   * one. Plain SQL: Prisma's createMany costs about 0.5 ms a row on SQLite, this a tenth of that.
   * Columns are the row's fields in snake_case, as the schema maps every Run field.
   */
  async insertMany(rows: readonly RunRow[], provider: Provider, tx: Prisma | PrismaTypes.TransactionClient = this.prisma): Promise<void> {
    if (rows.length === 0) return;
    const fields = Object.keys(rows[0]) as (keyof RunRow)[];
    const columns = fields.map((f) => `"${f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}"`).join(", ");
    for (let i = 0; i < rows.length; i += 100) {
      const parameters = new SqlParameters(provider);
      const tuples = rows.slice(i, i + 100).map((row) => `(${fields.map((f) => parameters.add(row[f])).join(", ")})`);
      await tx.$executeRawUnsafe(`INSERT INTO "run" (${columns}) VALUES ${tuples.join(", ")}`, ...parameters.values);
    }
  }

  /** Per job, how many of its runs have a status outside `finishedStatuses` (jobs with none are absent). */
  async countUnfinishedByJob(jobIds: readonly string[], finishedStatuses: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for (let i = 0; i < jobIds.length; i += 500) {
      const groups = await this.prisma.run.groupBy({
        by: ["jobId"],
        where: { jobId: { in: jobIds.slice(i, i + 500) }, status: { notIn: [...finishedStatuses] } },
        _count: { _all: true },
      });
      for (const group of groups) if (group.jobId !== null) counts.set(group.jobId, group._count._all);
    }
    return counts;
  }
}
