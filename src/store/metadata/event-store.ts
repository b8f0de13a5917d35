// Events link an artifact to an execution; they are immutable and have no id in the API.
import type { Event_Path } from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import type { Prisma } from "../database.js";
import { decodeEventPath, encodeEventPath } from "./codec.js";

export interface StoredEvent {
  artifactId: bigint;
  executionId: bigint;
  type: number;
  millisecondsSinceEpoch: bigint;
  path?: Event_Path;
}

export class EventStore {
  constructor(private readonly prisma: Prisma) {}

  async insert(event: StoredEvent): Promise<void> {
    await this.prisma.event.create({
      data: {
        artifactId: event.artifactId,
        executionId: event.executionId,
        type: event.type,
        millisecondsSinceEpoch: event.millisecondsSinceEpoch,
        path: encodeEventPath(event.path),
      },
    });
  }

  /** Events of one artifact or one execution, in the order they were recorded. */
  async listFor(side: "artifact" | "execution", id: bigint): Promise<StoredEvent[]> {
    const rows = await this.prisma.event.findMany({
      where: side === "artifact" ? { artifactId: id } : { executionId: id },
      orderBy: { id: "asc" },
    });
    return rows.map((row) => ({
      artifactId: row.artifactId,
      executionId: row.executionId,
      type: row.type,
      millisecondsSinceEpoch: row.millisecondsSinceEpoch,
      path: decodeEventPath(row.path),
    }));
  }
}
