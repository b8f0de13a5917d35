// Migrations apply once, survive a second start, and serialise between concurrent starts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Sqlite from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { migratePostgres, migrateSqlite, readMigrations } from "../../src/store/migrate.js";
import { freshPostgresDatabase } from "../helpers/postgres.js";
import { databases } from "../helpers/server.js";

const dir = mkdtempSync(join(tmpdir(), "pipewright-migrate-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("SQLite migrations", () => {
  it("apply every file once and nothing on a second run", () => {
    const db = new Sqlite(join(dir, "a.db"));
    expect(migrateSqlite(db)).toEqual(readMigrations("sqlite").map((m) => m.name));
    expect(migrateSqlite(db)).toEqual([]);
    db.close();
  });

  it("leave a usable database when two processes' connections start at once", async () => {
    const url = `file:${join(dir, "b.db")}`;
    const [a, b] = await Promise.all([openDatabase(url), openDatabase(url)]);
    await a.prisma.metadataType.create({ data: { kind: "artifact", name: "x", properties: "{}" } });
    expect(await b.prisma.metadataType.count()).toBe(1);
    await Promise.all([a.close(), b.close()]);
  });
});

describe.runIf(databases.includes("postgresql"))("PostgreSQL migrations", () => {
  it("apply once even when two clients race", async () => {
    const url = await freshPostgresDatabase();
    const clients = [new pg.Client({ connectionString: url }), new pg.Client({ connectionString: url })];
    await Promise.all(clients.map((c) => c.connect()));
    const results = await Promise.all(clients.map((c) => migratePostgres(c)));
    expect(results.flat()).toEqual(readMigrations("postgresql").map((m) => m.name));
    expect(await migratePostgres(clients[0])).toEqual([]);
    const { rows } = await clients[0].query(`SELECT count(*)::int AS n FROM "_pipewright_migrations"`);
    expect(rows[0].n).toBe(readMigrations("postgresql").length);
    await Promise.all(clients.map((c) => c.end()));
  });
});
