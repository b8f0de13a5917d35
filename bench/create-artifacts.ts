// CreateArtifact through the metadata domain (validation + Prisma) against raw better-sqlite3
// inserts of the same rows into the same schema.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Sqlite from "better-sqlite3";
import { PropertyType } from "../gen/proto/ml_metadata/metadata_store_pb.js";
import { metadataDomain } from "../src/services/metadata/index.js";
import { openDatabase } from "../src/store/database.js";
import { migrateSqlite } from "../src/store/migrate.js";
import { encodeValues } from "../src/store/metadata/codec.js";
import { create } from "@bufbuild/protobuf";
import { ValueSchema } from "../gen/proto/ml_metadata/metadata_store_pb.js";

const properties = {
  name: create(ValueSchema, { value: { case: "stringValue", value: "model" } }),
  rows: create(ValueSchema, { value: { case: "intValue", value: 1234n } }),
};

export async function createArtifactsPerSecond(count: number): Promise<{ ours: number; raw: number }> {
  const dir = mkdtempSync(join(tmpdir(), "pipewright-bench-db-"));
  try {
    const db = await openDatabase(`file:${join(dir, "ours.db")}`);
    const domain = metadataDomain(db);
    await domain.artifactTypes.create({ name: "bench/type", properties: { name: PropertyType.STRING, rows: PropertyType.INT } });
    let start = performance.now();
    for (let i = 0; i < count; i++) {
      await domain.artifacts.create("artifact_types/bench/type", { uri: `s3://b/${i}`, properties, customProperties: {} }, false);
    }
    const ours = count / ((performance.now() - start) / 1000);
    await db.close();

    const raw = new Sqlite(join(dir, "raw.db"));
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = NORMAL");
    migrateSqlite(raw);
    raw.prepare(`INSERT INTO metadata_type (kind, name, properties) VALUES ('artifact', 'bench/type', '{}')`).run();
    const insert = raw.prepare(`INSERT INTO artifact (type_id, uri, properties, custom_properties) VALUES (1, ?, ?, '{}')`);
    start = performance.now();
    for (let i = 0; i < count; i++) insert.run(`s3://b/${i}`, encodeValues(properties));
    const rawRate = count / ((performance.now() - start) / 1000);
    raw.close();
    return { ours, raw: rawRate };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
