-- Metadata service tables (artifact/execution types, artifacts, executions, events).
CREATE TABLE "metadata_type" (
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "kind" TEXT NOT NULL,
  "name" TEXT NOT NULL,
  "properties" TEXT NOT NULL,
  "input_type" TEXT,
  "output_type" TEXT
);
CREATE UNIQUE INDEX "metadata_type_kind_name_key" ON "metadata_type" ("kind", "name");

CREATE TABLE "artifact" (
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "type_id" INTEGER NOT NULL REFERENCES "metadata_type" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "uri" TEXT NOT NULL,
  "properties" TEXT NOT NULL,
  "custom_properties" TEXT NOT NULL
);
CREATE INDEX "artifact_type_id_id_idx" ON "artifact" ("type_id", "id");

CREATE TABLE "execution" (
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "type_id" INTEGER NOT NULL REFERENCES "metadata_type" ("id") ON DELETE RESTRICT ON UPDATE CASCADE,
  "last_known_state" INTEGER,
  "properties" TEXT NOT NULL,
  "custom_properties" TEXT NOT NULL
);
CREATE INDEX "execution_type_id_id_idx" ON "execution" ("type_id", "id");

CREATE TABLE "event" (
  "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  "artifact_id" INTEGER NOT NULL REFERENCES "artifact" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "execution_id" INTEGER NOT NULL REFERENCES "execution" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
  "type" INTEGER NOT NULL,
  "milliseconds_since_epoch" INTEGER NOT NULL,
  "path" TEXT
);
CREATE INDEX "event_artifact_id_id_idx" ON "event" ("artifact_id", "id");
CREATE INDEX "event_execution_id_id_idx" ON "event" ("execution_id", "id");
