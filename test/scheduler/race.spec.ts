// Exactly once across processes: schedulers with their own connections (one in a child process
// that gets SIGKILLed) race over the same due slots on one PostgreSQL database.
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Scheduler } from "../../src/scheduler/scheduler.js";
import { openDatabase, type Database } from "../../src/store/database.js";
import { freshPostgresDatabase, postgresAvailable } from "../helpers/postgres.js";
import { insertExperiment, insertJob, second } from "./helpers.js";

const now = Date.parse("2026-03-01T10:00:00Z");
const fixture = fileURLToPath(new URL("./fixtures/scheduler-process.ts", import.meta.url));

/** A scheduler whose clock stands at `now` and whose runs finish the moment they exist. */
function racer(db: Database) {
  const created: string[] = [];
  let conflicts = 0;
  const scheduler = new Scheduler({
    db,
    clock: { now: () => now, sleep: () => Promise.resolve() },
    onRunCreated: async (row) => {
      created.push(row.id);
      await db.prisma.run.update({ where: { id: row.id }, data: { status: "Succeeded" } });
    },
    log: {
      warn: () => {},
      error: (details, message) => {
        throw new Error(`${message}: ${String((details as { err?: unknown }).err)}`);
      },
    },
  });
  return {
    created,
    conflicts: () => conflicts,
    /** Passes until one finds nothing due, nothing blocked and nothing lost to a rival. */
    async drain(): Promise<void> {
      for (;;) {
        const pass = await scheduler.runOnce();
        conflicts += pass.conflicts;
        if (pass.created === 0 && pass.conflicts === 0 && pass.blocked === 0) return;
      }
    },
  };
}

/** `jobs` periodic jobs (1 s) with `slotsPerJob` slots due at `now`, max_concurrency 10. */
async function dueJobs(db: Database, jobs: number, slotsPerJob: number): Promise<string[]> {
  const experimentId = await insertExperiment(db);
  const ids: string[] = [];
  for (let i = 0; i < jobs; i++) {
    const job = await insertJob(db, {
      name: `racing-${i}`,
      experimentId,
      intervalSecond: 1,
      startTime: now - slotsPerJob * second,
      createdAt: now - slotsPerJob * second,
      maxConcurrency: 10,
    });
    ids.push(job.id);
  }
  return ids;
}

/** Every job has exactly its slots, each once, and a fired count to match. */
async function expectExactlyOnce(db: Database, jobIds: string[], slotsPerJob: number): Promise<void> {
  const duplicates = await db.prisma.$queryRawUnsafe<unknown[]>(
    "select job_id, scheduled_at, count(*) from run group by job_id, scheduled_at having count(*) > 1",
  );
  expect(duplicates).toEqual([]);
  const expected = Array.from({ length: slotsPerJob }, (_, i) => BigInt(now - (slotsPerJob - 1 - i) * second));
  for (const id of jobIds) {
    const runs = await db.prisma.run.findMany({ where: { jobId: id }, orderBy: { scheduledAt: "asc" }, select: { scheduledAt: true, name: true } });
    expect(runs.map((r) => r.scheduledAt)).toEqual(expected);
    expect(new Set(runs.map((r) => r.name)).size).toBe(slotsPerJob);
    expect(await db.prisma.job.findUniqueOrThrow({ where: { id } })).toMatchObject({
      firedCount: slotsPerJob,
      lastScheduledAt: BigInt(now),
    });
  }
}

describe.skipIf(!postgresAvailable)("schedulers racing on one PostgreSQL", () => {
  let url: string;
  let dbs: Database[] = [];
  let child: ChildProcess | undefined;
  const open = async () => {
    const db = await openDatabase(url);
    dbs.push(db);
    return db;
  };

  beforeEach(async () => {
    url = await freshPostgresDatabase();
  });
  afterEach(async () => {
    child?.kill("SIGKILL");
    child = undefined;
    await Promise.all(dbs.map((db) => db.close()));
    dbs = [];
  });

  it("two schedulers over 1,000 due slots: no duplicate, no slot missed", async () => {
    const [a, b] = [racer(await open()), racer(await open())];
    const jobIds = await dueJobs(dbs[0], 4, 250);
    await Promise.all([a.drain(), b.drain()]);
    await expectExactlyOnce(dbs[0], jobIds, 250);
    expect(a.created.length + b.created.length).toBe(1000);
    expect(new Set([...a.created, ...b.created]).size).toBe(1000);
    // Both took part, and they did collide.
    expect(a.created.length).toBeGreaterThan(0);
    expect(b.created.length).toBeGreaterThan(0);
    expect(a.conflicts() + b.conflicts()).toBeGreaterThan(0);
  });

  it("a scheduler process killed mid-way loses nothing and duplicates nothing", async () => {
    const db = await open();
    const jobIds = await dueJobs(db, 4, 500);
    const survivor = racer(await open());

    child = spawn(process.execPath, ["--import", "tsx", fixture, url, String(now)], { stdio: ["ignore", "pipe", "inherit"] });
    const [started] = (await once(child.stdout!, "data")) as [Buffer];
    expect(started.toString()).toContain("started");

    // Let the child fire alone for a while, then race it, then kill it while it is busy.
    const count = () => db.prisma.run.count();
    while ((await count()) < 200) await new Promise((resolve) => setTimeout(resolve, 5));
    const racing = survivor.drain();
    while ((await count()) < 800) await new Promise((resolve) => setTimeout(resolve, 5));
    const exited = once(child, "exit");
    child.kill("SIGKILL");
    await exited;
    const atKill = await count();
    expect(atKill).toBeLessThan(2000);
    // Runs the child committed but had not yet marked finished stay unfinished, as with a real
    // crash, and would hold max_concurrency: finish them, as the engine's recovery would.
    await db.prisma.run.updateMany({ where: { status: "Pending" }, data: { status: "Succeeded" } });

    await racing;
    await survivor.drain();
    await expectExactlyOnce(db, jobIds, 500);
    const byChild = (await count()) - survivor.created.length;
    expect(byChild).toBeGreaterThanOrEqual(200);
  });
});
