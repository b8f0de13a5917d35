// Artifacts and executions ("nodes" in ml_metadata terms) share one shape of storage: a type,
// two property maps, and, per kind, a uri or a last known state.
import type { Value } from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import type { Prisma } from "../database.js";
import { decodeValues, encodeValues } from "./codec.js";
import type { TypeKind } from "./type-store.js";

export interface StoredNode {
  id: bigint;
  typeId: bigint;
  /** Artifacts only. */
  uri?: string;
  /** Executions only; absent when never set. */
  lastKnownState?: number;
  properties: { [key: string]: Value };
  customProperties: { [key: string]: Value };
}

export type NewNode = Omit<StoredNode, "id">;

interface NodeRow {
  id: bigint;
  typeId: bigint;
  uri?: string;
  lastKnownState?: number | null;
  properties: string;
  customProperties: string;
}

// The subset of the two Prisma delegates (artifact, execution) this store uses; their
// generated types differ only in the kind-specific column.
interface NodeDelegate {
  create(args: { data: Omit<NodeRow, "id"> }): Promise<NodeRow>;
  findUnique(args: { where: { id: bigint } }): Promise<NodeRow | null>;
  findMany(args: { where?: { typeId?: bigint; id?: { in: bigint[] } }; orderBy: { id: "asc" } }): Promise<NodeRow[]>;
  deleteMany(args: { where: { id: bigint } }): Promise<{ count: number }>;
}

const fromRow = (row: NodeRow): StoredNode => ({
  id: row.id,
  typeId: row.typeId,
  ...(row.uri !== undefined && { uri: row.uri }),
  ...(row.lastKnownState != null && { lastKnownState: row.lastKnownState }),
  properties: decodeValues(row.properties),
  customProperties: decodeValues(row.customProperties),
});

export class NodeStore {
  constructor(private readonly prisma: Prisma) {}

  private table(kind: TypeKind): NodeDelegate {
    return (kind === "artifact" ? this.prisma.artifact : this.prisma.execution) as unknown as NodeDelegate;
  }

  async insert(kind: TypeKind, node: NewNode): Promise<StoredNode> {
    const data: Omit<NodeRow, "id"> = {
      typeId: node.typeId,
      properties: encodeValues(node.properties),
      customProperties: encodeValues(node.customProperties),
      ...(kind === "artifact" ? { uri: node.uri ?? "" } : { lastKnownState: node.lastKnownState ?? null }),
    };
    return fromRow(await this.table(kind).create({ data }));
  }

  async byId(kind: TypeKind, id: bigint): Promise<StoredNode | undefined> {
    const row = await this.table(kind).findUnique({ where: { id } });
    return row ? fromRow(row) : undefined;
  }

  /** In ascending id order; all nodes of the kind when no type is given. */
  async list(kind: TypeKind, typeId?: bigint): Promise<StoredNode[]> {
    const rows = await this.table(kind).findMany({ where: typeId === undefined ? {} : { typeId }, orderBy: { id: "asc" } });
    return rows.map(fromRow);
  }

  async byIds(kind: TypeKind, ids: bigint[]): Promise<StoredNode[]> {
    if (ids.length === 0) return [];
    const rows = await this.table(kind).findMany({ where: { id: { in: ids } }, orderBy: { id: "asc" } });
    return rows.map(fromRow);
  }

  /** Deletes the node and, through the foreign keys, its events. */
  async delete(kind: TypeKind, id: bigint): Promise<boolean> {
    const { count } = await this.table(kind).deleteMany({ where: { id } });
    return count === 1;
  }
}
