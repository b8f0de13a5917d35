// PostgreSQL for tests: the server comes from test/global-setup.ts; each test file takes its own
// database, so files can run in parallel without seeing each other's rows.
//
//   describe.skipIf(!postgresAvailable)("on PostgreSQL", () => {
//     let url: string;
//     beforeAll(async () => { url = await freshPostgresDatabase(); });
//   });
import pg from "pg";
import { inject } from "vitest";

/** URL of the test server's `pipewright_test` database, or undefined without PostgreSQL. */
export function postgresServerUrl(): string | undefined {
  // The global setup's answer wins; the variable serves runs without it.
  return (inject("pipewrightPostgresUrl") ?? process.env.PIPEWRIGHT_TEST_POSTGRES_URL) || undefined;
}

export const postgresAvailable: boolean = postgresServerUrl() !== undefined;

let created = 0;

/** Creates an empty database on the test server and returns its URL. */
export async function freshPostgresDatabase(): Promise<string> {
  const serverUrl = postgresServerUrl();
  if (!serverUrl) {
    throw new Error("PostgreSQL is not available: guard the suite with describe.skipIf(!postgresAvailable)");
  }
  const name = `${inject("pipewrightDatabasePrefix")}${process.pid}_${++created}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`create database "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export type DatabaseKind = "sqlite" | "postgresql";

/** The databases every suite runs against: SQLite always, PostgreSQL when one is available. */
export const databases: DatabaseKind[] = process.env.PIPEWRIGHT_TEST_POSTGRES_URL ? ["sqlite", "postgresql"] : ["sqlite"];
