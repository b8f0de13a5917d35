// Recurring jobs.
import type { Job } from "../../../gen/prisma/sqlite/client.js";
import type { Prisma } from "../database.js";

export type JobRow = Job;

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
}
