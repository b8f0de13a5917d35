// Applies the SQL files of prisma/migrations/<provider>/ in name order, each once, recording
// them in a table. Safe to run twice and from several processes at once: SQLite serialises on
// an immediate transaction, PostgreSQL on an advisory lock.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import type pg from "pg";
import { packageRoot } from "../package-root.js";

export type Provider = "sqlite" | "postgresql";

interface Migration {
  name: string;
  sql: string;
}

export function readMigrations(provider: Provider): Migration[] {
  const dir = join(packageRoot, "prisma", "migrations", provider);
  return readdirSync(dir)
    .filter((file) => file.endsWith(".sql"))
    .sort()
    .map((name) => ({ name, sql: readFileSync(join(dir, name), "utf8") }));
}

const createLedger = `CREATE TABLE IF NOT EXISTS "_pipewright_migrations" (
  "name" TEXT NOT NULL PRIMARY KEY,
  "applied_at" TEXT NOT NULL
)`;

export function migrateSqlite(db: BetterSqlite3.Database): string[] {
  const applied: string[] = [];
  db.transaction(() => {
    db.exec(createLedger);
    const done = new Set(
      (db.prepare(`SELECT "name" FROM "_pipewright_migrations"`).all() as { name: string }[]).map((r) => r.name),
    );
    const record = db.prepare(`INSERT INTO "_pipewright_migrations" ("name", "applied_at") VALUES (?, ?)`);
    for (const m of readMigrations("sqlite")) {
      if (done.has(m.name)) continue;
      db.exec(m.sql);
      record.run(m.name, new Date().toISOString());
      applied.push(m.name);
    }
  }).immediate();
  return applied;
}

// Any constant works; it only has to be the same for every Pipewright process.
const migrationLockKey = 7_302_215_114;

export async function migratePostgres(client: pg.ClientBase): Promise<string[]> {
  const applied: string[] = [];
  await client.query("SELECT pg_advisory_lock($1)", [migrationLockKey]);
  try {
    await client.query("BEGIN");
    try {
      await client.query(createLedger);
      const { rows } = await client.query<{ name: string }>(`SELECT "name" FROM "_pipewright_migrations"`);
      const done = new Set(rows.map((r) => r.name));
      for (const m of readMigrations("postgresql")) {
        if (done.has(m.name)) continue;
        await client.query(m.sql);
        await client.query(`INSERT INTO "_pipewright_migrations" ("name", "applied_at") VALUES ($1, $2)`, [
          m.name,
          new Date().toISOString(),
        ]);
        applied.push(m.name);
      }
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK");
      throw err;
    }
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [migrationLockKey]);
  }
  return applied;
}
