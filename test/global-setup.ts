// Vitest global setup: a PostgreSQL server for the suites that run on PostgreSQL.
// Uses PIPEWRIGHT_TEST_POSTGRES_URL when it points at a reachable server; otherwise starts a
// throwaway PostgreSQL 15 cluster under /tmp (fsync off, trust auth) and stops it at the end.
// Test files get isolated databases from test/helpers/postgres.ts.
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** Server URL (its database `pipewright_test`); "" when PostgreSQL is unavailable. */
    pipewrightPostgresUrl: string;
    /** Prefix of the databases this run creates, dropped at the end on a server we did not start. */
    pipewrightDatabasePrefix: string;
  }
}

const run = promisify(execFile);
const binDir = process.env.PIPEWRIGHT_POSTGRES_BIN ?? "/usr/lib/postgresql/15/bin";
const databaseName = "pipewright_test";

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const prefix = `pw_${randomBytes(4).toString("hex")}_`;
  project.provide("pipewrightDatabasePrefix", prefix);

  const given = process.env.PIPEWRIGHT_TEST_POSTGRES_URL;
  if (given && (await reachable(given))) {
    project.provide("pipewrightPostgresUrl", given);
    return () => dropDatabases(given, prefix);
  }
  if (given) console.warn(`PIPEWRIGHT_TEST_POSTGRES_URL (${given}) is unreachable; starting a throwaway cluster`);

  if (!existsSync(path.join(binDir, "initdb"))) {
    const message = `PostgreSQL binaries not found in ${binDir}`;
    if (process.env.CI && process.env.CI !== "false") throw new Error(`${message}; CI must run the PostgreSQL suites`);
    console.warn(`${message}: PostgreSQL suites are skipped`);
    delete process.env.PIPEWRIGHT_TEST_POSTGRES_URL;
    project.provide("pipewrightPostgresUrl", "");
    return async () => {};
  }

  const cluster = await startCluster();
  process.env.PIPEWRIGHT_TEST_POSTGRES_URL = cluster.url;
  project.provide("pipewrightPostgresUrl", cluster.url);
  return cluster.stop;
}

async function reachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function dropDatabases(url: string, prefix: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(
      "select datname from pg_database where starts_with(datname, $1)",
      [prefix],
    );
    for (const { datname } of rows) await client.query(`drop database "${datname}" with (force)`);
  } finally {
    await client.end();
  }
}

async function startCluster(): Promise<{ url: string; stop: () => Promise<void> }> {
  // initdb refuses to run as root: then the cluster belongs to the postgres user. The directory
  // lives under /tmp so that user can reach it; it also holds the Unix socket.
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync("/tmp/pipewright-pg-");
  if (asRoot) {
    const [uid, gid] = ["-u", "-g"].map((flag) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" })));
    chownSync(dir, uid!, gid!);
  }
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ["runuser", ["-u", "postgres", "--", path.join(binDir, tool), ...args]] : [path.join(binDir, tool), args];
  const dataDir = path.join(dir, "data");
  const port = await freePort();

  let stopped = false;
  const stopSync = () => {
    if (stopped) return;
    stopped = true;
    try {
      execFileSync(...command("pg_ctl", ["-D", dataDir, "-m", "immediate", "stop"]), { stdio: "ignore" });
    } catch {
      // not running
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Teardown does not run when vitest is killed; the exit hook still stops the server.
  process.once("exit", stopSync);

  try {
    await run(...command("initdb", ["-D", dataDir, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync"]));
    const options = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
      "-c max_connections=300",
    ].join(" ");
    // -l: the server must not inherit our stdout, or execFile would wait for it to exit.
    await run(...command("pg_ctl", ["-D", dataDir, "-o", options, "-l", path.join(dir, "server.log"), "-w", "start"]));
    const serverUrl = `postgres://postgres@127.0.0.1:${port}`;
    const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
    await client.connect();
    await client.query(`create database ${databaseName}`);
    await client.end();
    return {
      url: `${serverUrl}/${databaseName}`,
      stop: async () => {
        if (stopped) return;
        stopped = true;
        process.removeListener("exit", stopSync);
        try {
          await run(...command("pg_ctl", ["-D", dataDir, "-m", "fast", "-w", "stop"]));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (error) {
    const log = path.join(dir, "server.log");
    if (existsSync(log)) console.error(execFileSync("tail", ["-n", "20", log], { encoding: "utf8" }));
    stopSync();
    throw error;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
