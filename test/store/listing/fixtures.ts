// Rows for the listing suites, inserted straight through Prisma, and the expected orders.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase, type Database } from "../../../src/store/database.js";
import type { DatabaseKind } from "../../helpers/server.js";
import { freshPostgresDatabase } from "../../helpers/postgres.js";

export const T = 1600000000000n; // 2020-09-13T12:26:40Z

export async function openTestDatabase(kind: DatabaseKind): Promise<{ db: Database; close: () => Promise<void> }> {
  if (kind === "postgresql") {
    const db = await openDatabase(await freshPostgresDatabase());
    return { db, close: () => db.close() };
  }
  const dir = mkdtempSync(join(tmpdir(), "pipewright-listing-"));
  const db = await openDatabase(`file:${join(dir, "test.db")}`);
  return {
    db,
    close: async () => {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface ExperimentRow {
  id: string;
  name: string;
  description: string;
  createdAt: bigint;
}

// Ids deliberately out of insertion order; duplicates of created_at and description.
export const experiments: ExperimentRow[] = [
  { id: "e5", name: "mango", description: "b", createdAt: T + 2000n },
  { id: "e2", name: "apple", description: "a", createdAt: T },
  { id: "e7", name: "kiwi", description: "b", createdAt: T + 2000n },
  { id: "e1", name: "fig", description: "", createdAt: T + 1000n },
  { id: "e6", name: "banana", description: "a", createdAt: T },
  { id: "e3", name: "cherry", description: "c", createdAt: T + 2000n },
  { id: "e4", name: "date", description: "b", createdAt: T + 500n },
];

export const pipelines = experiments.map((e) => ({ ...e, id: e.id.replace("e", "p"), parameters: "[]", template: "kind: Workflow" }));

export interface RunRow {
  id: string;
  name: string;
  description: string;
  storageState: number;
  experimentId: string;
  jobId: string | null;
  createdAt: bigint;
  scheduledAt: bigint;
}

// Nine runs: three full pages of three. Names with LIKE wildcards and a backslash, duplicate
// names and times, two experiments, one job.
export const runs: RunRow[] = [
  { id: "r5", name: "alpha", description: "d1", storageState: 0, experimentId: "E1", jobId: null, createdAt: T, scheduledAt: T + 5000n },
  { id: "r2", name: "ALPHA-2", description: "d2", storageState: 1, experimentId: "E1", jobId: null, createdAt: T, scheduledAt: T + 5000n },
  { id: "r8", name: "beta", description: "d1", storageState: 0, experimentId: "E2", jobId: "J1", createdAt: T + 1000n, scheduledAt: T + 1000n },
  { id: "r1", name: "50%_off", description: "", storageState: 0, experimentId: "E1", jobId: null, createdAt: T + 1500n, scheduledAt: T + 1000n },
  { id: "r9", name: "50x_off", description: "d3", storageState: 1, experimentId: "E2", jobId: "J1", createdAt: T + 1999n, scheduledAt: T },
  { id: "r4", name: "5_0", description: "d2", storageState: 0, experimentId: "E1", jobId: null, createdAt: T + 2000n, scheduledAt: T + 9000n },
  { id: "r7", name: "a\\b", description: "d1", storageState: 0, experimentId: "E2", jobId: "J1", createdAt: T + 2000n, scheduledAt: T + 9000n },
  { id: "r3", name: "42", description: "d3", storageState: 1, experimentId: "E1", jobId: null, createdAt: T + 3000n, scheduledAt: T },
  { id: "r6", name: "alpha", description: "d1", storageState: 0, experimentId: "E1", jobId: null, createdAt: T + 3000n, scheduledAt: T + 5000n },
];

export interface JobRow {
  id: string;
  name: string;
  pipelineId: string | null;
  createdAt: bigint;
}

// package_id: NULLs, an empty string and duplicates.
export const jobs: JobRow[] = [
  { id: "j4", name: "nightly", pipelineId: null, createdAt: T + 1000n },
  { id: "j2", name: "hourly", pipelineId: "p2", createdAt: T },
  { id: "j6", name: "weekly", pipelineId: "p1", createdAt: T + 1000n },
  { id: "j1", name: "hourly", pipelineId: null, createdAt: T + 2000n },
  { id: "j7", name: "once", pipelineId: "", createdAt: T },
  { id: "j3", name: "daily", pipelineId: "p2", createdAt: T + 3000n },
  { id: "j5", name: "monthly", pipelineId: "p1", createdAt: T + 3000n },
];

export async function insertAll(db: Database): Promise<void> {
  const p = db.prisma;
  await p.experiment.createMany({ data: experiments });
  await p.pipeline.createMany({ data: pipelines });
  await p.run.createMany({
    data: runs.map((r) => ({
      ...r,
      pipelineId: null,
      workflowManifest: `{"big":"manifest of ${r.id}"}`,
      parameters: "[]",
      runtimeManifest: "{}",
      status: "Succeeded",
      error: "",
      finishedAt: null,
    })),
  });
  await p.job.createMany({
    data: jobs.map((j) => ({
      ...j,
      description: "",
      experimentId: "E1",
      workflowManifest: "{}",
      parameters: "[]",
      maxConcurrency: 1,
      cron: null,
      intervalSecond: null,
      startTime: null,
      endTime: null,
      enabled: true,
      noCatchup: false,
      status: "Enabled",
      updatedAt: j.createdAt,
      firedCount: 0,
      lastScheduledAt: null,
    })),
  });
}

/**
 * Rank of each text under the database's own collation (SQLite: byte order; PostgreSQL: the
 * database's collation, which need not be "C"), so expectations hold on any server.
 */
export async function collationRanks(db: Database, texts: string[]): Promise<Map<string, number>> {
  const distinct = [...new Set(texts)];
  let ordered: string[];
  if (db.provider === "postgresql") {
    const rows = await db.prisma.$queryRawUnsafe<Array<{ s: string }>>(`SELECT s FROM unnest($1::text[]) AS s ORDER BY s`, distinct);
    ordered = rows.map((r) => r.s);
  } else {
    ordered = distinct.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  }
  return new Map(ordered.map((s, i) => [s, i]));
}

type Value = string | bigint | number | null;

/** Ids in (value, id) order, both in the given direction; NULL first ascending. */
export function expectedOrder<R extends { id: string }>(rows: R[], value: (r: R) => Value, desc: boolean, ranks: Map<string, number>): string[] {
  const key = (v: Value): number | bigint => (v === null ? -1 : typeof v === "string" ? ranks.get(v)! : v);
  const ids = [...rows].sort((a, b) => {
    const [x, y] = [key(value(a)), key(value(b))];
    if (x !== y) return x < y ? -1 : 1;
    return (ranks.get(a.id)! - ranks.get(b.id)!);
  });
  return desc ? ids.reverse().map((r) => r.id) : ids.map((r) => r.id);
}
