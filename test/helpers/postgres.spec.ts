import pg from "pg";
import { describe, expect, it } from "vitest";
import { freshPostgresDatabase, postgresAvailable, postgresServerUrl } from "./postgres.js";

describe.skipIf(!postgresAvailable)("freshPostgresDatabase", () => {
  it("finds the server in the environment too", () => {
    expect(process.env.PIPEWRIGHT_TEST_POSTGRES_URL).toBe(postgresServerUrl());
  });

  it("returns a new empty database for each call", async () => {
    const [first, second] = await Promise.all([freshPostgresDatabase(), freshPostgresDatabase()]);
    expect(first).not.toEqual(second);
    for (const url of [first, second]) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const { rows } = await client.query("select 1 as one, current_database() as db");
        expect(rows).toEqual([{ one: 1, db: new URL(url).pathname.slice(1) }]);
        const tables = await client.query("select count(*)::int as n from pg_tables where schemaname = 'public'");
        expect(tables.rows[0].n).toBe(0);
      } finally {
        await client.end();
      }
    }
  });
});
