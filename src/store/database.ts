// Opens storage from a URL: a SQLite file (default) or PostgreSQL. Migrations run before the
// Prisma client is handed out, so callers always see the current schema.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { PrismaClient as SqlitePrismaClient } from "../../gen/prisma/sqlite/client.js";
import { migratePostgres, migrateSqlite, type Provider } from "./migrate.js";

// Both generated clients have identical model types; the SQLite one names the shape.
export type Prisma = SqlitePrismaClient;

// Each provider's driver and Prisma client load only when that provider is used, which keeps
// the embedded default's start-up time and memory down.

export interface Database {
  provider: Provider;
  prisma: Prisma;
  close(): Promise<void>;
}

export function providerOf(url: string): Provider {
  return /^postgres(ql)?:\/\//i.test(url) ? "postgresql" : "sqlite";
}

/** `file:./data/x.db`, `file:/abs.db` or a bare path → the SQLite file path. */
export function sqlitePath(url: string): string {
  return url.startsWith("file:") ? url.slice("file:".length) : url;
}

export async function openDatabase(url: string): Promise<Database> {
  return providerOf(url) === "postgresql" ? openPostgres(url) : openSqlite(sqlitePath(url));
}

async function openSqlite(path: string): Promise<Database> {
  const [{ default: Sqlite }, { PrismaBetterSqlite3 }, { PrismaClient }] = await Promise.all([
    import("better-sqlite3"),
    import("@prisma/adapter-better-sqlite3"),
    import("../../gen/prisma/sqlite/client.js"),
  ]);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const setup = new Sqlite(path);
  try {
    // WAL lets readers run beside the writer; NORMAL sync survives a killed process.
    setup.pragma("journal_mode = WAL");
    setup.pragma("busy_timeout = 5000");
    migrateSqlite(setup);
  } finally {
    setup.close();
  }
  const adapter = new PrismaBetterSqlite3({ url: `file:${path}`, timeout: 5000 });
  const prisma = new PrismaClient({ adapter });
  // Per connection, unlike journal_mode: NORMAL is durable across process kills in WAL mode.
  await prisma.$executeRawUnsafe("PRAGMA synchronous = NORMAL");
  return {
    provider: "sqlite",
    prisma,
    close: () => prisma.$disconnect(),
  };
}

async function openPostgres(url: string): Promise<Database> {
  const [{ default: pg }, { PrismaPg }, { PrismaClient }] = await Promise.all([
    import("pg"),
    import("@prisma/adapter-pg"),
    import("../../gen/prisma/postgresql/client.js"),
  ]);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migratePostgres(client);
  } finally {
    await client.end();
  }
  const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url }) });
  return {
    provider: "postgresql",
    prisma: prisma as unknown as Prisma,
    close: () => prisma.$disconnect(),
  };
}
