// Recurring jobs.
import type { Job, Prisma as PrismaTypes } from "../../../gen/prisma/sqlite/client.js";
import type { Prisma } from "../database.js";
import type { Provider } from "../migrate.js";
import { SqlParameters } from "../sql-parameters.js";

export type JobRow = Job;

/** A Prisma client or the client of an interactive transaction. */
type Queries = Prisma | PrismaTypes.TransactionClient;

/** The columns the scheduler reads on every pass (the heavy ones, the manifest, stay out). */
const schedulingColumns = {
  id: true,
  experimentId: true,
  maxConcurrency: true,
  cron: true,
  intervalSecond: true,
  startTime: true,
  endTime: true,
  enabled: true,
  noCatchup: true,
  status: true,
  createdAt: true,
  updatedAt: true,
  firedCount: true,
  lastScheduledAt: true,
} as const satisfies Partial<Record<keyof JobRow, true>>;

export type JobSchedulingRow = Pick<JobRow, keyof typeof schedulingColumns>;

/**
 * A claim of a job's next slots (one or more, consecutive): it succeeds only while the job is
 * enabled and its fired_count is still the one the claimer read.
 */
export interface SlotClaim {
  id: string;
  /** The job's fired_count as the claimer read it. */
  expectedFiredCount: number;
  /** How many slots are claimed: fired_count becomes expectedFiredCount + count. */
  count: number;
  /** The latest slot claimed: the new last_scheduled_at. */
  lastScheduledAt: bigint;
  /** A new status to set with the claim (a one-off job's `Succeeded`). */
  status?: string;
}

export class JobStore {
  constructor(private readonly prisma: Prisma) {}

  async insert(row: JobRow): Promise<JobRow> {
    return this.prisma.job.create({ data: row });
  }

  async byId(id: string): Promise<JobRow | undefined> {
    return (await this.prisma.job.findUnique({ where: { id } })) ?? undefined;
  }

  /** Sets `enabled` (and the status that goes with it) only when it changes; false when missing. */
  async setEnabled(id: string, enabled: boolean, status: string, now: bigint): Promise<boolean> {
    const job = await this.byId(id);
    if (!job) return false;
    if (job.enabled !== enabled) {
      await this.prisma.job.updateMany({ where: { id, enabled: !enabled }, data: { enabled, status, updatedAt: now } });
    }
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return (await this.prisma.job.deleteMany({ where: { id } })).count === 1;
  }

  // ---- For the scheduler.

  /** Every enabled job's scheduling columns, in id order. */
  async schedulable(): Promise<JobSchedulingRow[]> {
    return this.prisma.job.findMany({ where: { enabled: true }, select: schedulingColumns, orderBy: { id: "asc" } });
  }

  /** The jobs with these ids (those that exist). */
  async byIds(ids: readonly string[]): Promise<JobRow[]> {
    const rows: JobRow[] = [];
    for (const chunk of chunks(ids)) rows.push(...(await this.prisma.job.findMany({ where: { id: { in: chunk } } })));
    return rows;
  }

  /** Which of these experiments (the owners of jobs) still exist. */
  async existingExperimentIds(experimentIds: readonly string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (const chunk of chunks(experimentIds)) {
      const rows = await this.prisma.experiment.findMany({ where: { id: { in: chunk } }, select: { id: true } });
      for (const { id } of rows) found.add(id);
    }
    return found;
  }

  /**
   * Claims slots of several jobs in one statement per 200 jobs, and returns the ids of the jobs
   * whose claim held. Run it in the transaction that inserts the claimed slots' runs, so that
   * claims and runs commit or vanish together.
   *
   * On PostgreSQL the rows are first locked in id order (SELECT … ORDER BY id FOR UPDATE): two
   * schedulers claiming overlapping jobs then queue on the first shared row instead of
   * deadlocking, and the one that waited sees the other's fired_count and claims nothing. SQLite
   * runs one writing transaction at a time.
   */
  async claimSlots(claims: readonly SlotClaim[], now: bigint, provider: Provider, tx: Queries = this.prisma): Promise<Set<string>> {
    const claimed = new Set<string>();
    const sorted = [...claims].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    for (const chunk of chunks(sorted, 200)) {
      if (provider === "postgresql") {
        const lock = new SqlParameters(provider);
        const ids = chunk.map((c) => lock.add(c.id)).join(", ");
        await tx.$queryRawUnsafe(`SELECT "id" FROM "job" WHERE "id" IN (${ids}) ORDER BY "id" FOR UPDATE`, ...lock.values);
      }
      const q = new SqlParameters(provider);
      const byId = (value: (c: SlotClaim) => string, of = chunk) =>
        `CASE "id" ${of.map((c) => `WHEN ${q.add(c.id)} THEN ${value(c)}`).join(" ")}`;
      const withStatus = chunk.filter((c) => c.status !== undefined);
      const sql =
        `UPDATE "job" SET ` +
        `"fired_count" = ${byId((c) => `CAST(${q.add(c.expectedFiredCount + c.count)} AS INTEGER)`)} END, ` +
        `"last_scheduled_at" = ${byId((c) => `CAST(${q.add(c.lastScheduledAt)} AS BIGINT)`)} END, ` +
        (withStatus.length > 0 ? `"status" = ${byId((c) => q.add(c.status!), withStatus)} ELSE "status" END, ` : "") +
        `"updated_at" = CAST(${q.add(now)} AS BIGINT) ` +
        `WHERE "enabled" AND "id" IN (${chunk.map((c) => q.add(c.id)).join(", ")}) ` +
        `AND "fired_count" = ${byId((c) => `CAST(${q.add(c.expectedFiredCount)} AS INTEGER)`)} END ` +
        `RETURNING "id"`;
      const rows = await tx.$queryRawUnsafe<{ id: string }[]>(sql, ...q.values);
      for (const { id } of rows) claimed.add(id);
    }
    return claimed;
  }

  /** Disables the job if it is enabled; false when it was not (or is missing). */
  async disableIfEnabled(id: string, status: string, now: bigint): Promise<boolean> {
    const { count } = await this.prisma.job.updateMany({ where: { id, enabled: true }, data: { enabled: false, status, updatedAt: now } });
    return count === 1;
  }

  /** Moves an enabled job's status from `from` to `to`; false when it was something else. */
  async updateStatusIfEnabled(id: string, from: string, to: string): Promise<boolean> {
    const { count } = await this.prisma.job.updateMany({ where: { id, enabled: true, status: from }, data: { status: to } });
    return count === 1;
  }
}

/** Ids in groups small enough for one IN list on either database. */
function chunks<T>(items: readonly T[], size = 500): T[][] {
  const groups: T[][] = [];
  for (let i = 0; i < items.length; i += size) groups.push(items.slice(i, i + size));
  return groups;
}
