// ListRuns (page of 50, one experiment's runs, created_at desc) with 1,000 and with 100,000 runs
// in the table, and CreateRun throughput, through the pipelines domain on SQLite.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Sqlite from "better-sqlite3";
import { create } from "@bufbuild/protobuf";
import { ListRunsRequestSchema, RunSchema } from "../gen/proto/kfp/run_pb.js";
import { ResourceType, Relationship } from "../gen/proto/kfp/resource_reference_pb.js";
import { FilesystemArtifactStore } from "../src/artifacts/store.js";
import { pipelinesDomain } from "../src/services/pipelines/index.js";
import { openDatabase } from "../src/store/database.js";

const manifest = JSON.stringify({
  apiVersion: "argoproj.io/v1alpha1",
  kind: "Workflow",
  metadata: { generateName: "bench-" },
  spec: { entrypoint: "main", templates: [{ name: "main", container: { image: "alpine", command: ["true"] } }] },
});

/** Adds `count` runs spread over 20 experiments straight into the table (bench set-up only). */
function seedRuns(file: string, experimentIds: string[], count: number, startMs: number) {
  const db = new Sqlite(file);
  const insert = db.prepare(
    `INSERT INTO run (id, name, description, storage_state, experiment_id, job_id, pipeline_id, workflow_manifest,
       parameters, runtime_manifest, status, error, created_at, scheduled_at, finished_at)
     VALUES (?, ?, '', 0, ?, NULL, NULL, ?, '[]', '{}', 'Succeeded', '', ?, ?, NULL)`,
  );
  db.transaction(() => {
    for (let i = 0; i < count; i++) {
      const at = startMs + i;
      insert.run(randomUUID(), `run-${startMs + i}`, experimentIds[i % experimentIds.length], manifest, at, at);
    }
  })();
  db.close();
}

const engineSettings = (dir: string) => ({ scratchRoot: join(dir, "work"), maxConcurrentSteps: 2 });

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
}

export async function listRunsLatency(): Promise<{ small: number; large: number; createsPerSecond: number }> {
  const dir = mkdtempSync(join(tmpdir(), "pipewright-bench-runs-"));
  const file = join(dir, "runs.db");
  try {
    let db = await openDatabase(`file:${file}`);
    let domain = pipelinesDomain(db, new FilesystemArtifactStore(join(dir, "artifacts")), engineSettings(dir));
    const experimentIds: string[] = [];
    for (let i = 0; i < 20; i++) experimentIds.push((await domain.experiments.create(`experiment-${i}`, "")).id);
    await domain.engine.close();
    await db.close();

    const measure = async () => {
      db = await openDatabase(`file:${file}`);
      domain = pipelinesDomain(db, new FilesystemArtifactStore(join(dir, "artifacts")), engineSettings(dir));
      const request = create(ListRunsRequestSchema, {
        pageSize: 50,
        sortBy: "created_at desc",
        resourceReferenceKey: { type: ResourceType.EXPERIMENT, id: experimentIds[3] },
      });
      for (let i = 0; i < 50; i++) await domain.lists.runs(request); // warm-up
      const samples: number[] = [];
      for (let i = 0; i < 300; i++) {
        const start = performance.now();
        const page = await domain.lists.runs(request);
        samples.push(performance.now() - start);
        if (page.rows.length !== 50) throw new Error("expected a full page");
      }
      await domain.engine.close();
      await db.close();
      return percentile(samples, 50);
    };

    seedRuns(file, experimentIds, 1_000, 1_700_000_000_000);
    const small = await measure();
    seedRuns(file, experimentIds, 99_000, 1_700_000_001_000);
    const large = await measure();

    db = await openDatabase(`file:${file}`);
    domain = pipelinesDomain(db, new FilesystemArtifactStore(join(dir, "artifacts")), engineSettings(dir));
    const run = create(RunSchema, {
      name: "bench",
      pipelineSpec: { workflowManifest: manifest },
      resourceReferences: [{ key: { type: ResourceType.EXPERIMENT, id: experimentIds[0] }, relationship: Relationship.OWNER }],
    });
    const creates = 500;
    const start = performance.now();
    for (let i = 0; i < creates; i++) await domain.runs.create(await domain.runs.prepare(run));
    const createsPerSecond = creates / ((performance.now() - start) / 1000);
    await domain.engine.close();
    await db.close();
    return { small, large, createsPerSecond };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
