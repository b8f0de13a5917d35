// Artifact and execution types: one table, told apart by `kind`.
import type { ArtifactStructType, PropertyType } from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import type { Prisma } from "../database.js";
import { prismaErrorKind } from "../prisma-errors.js";
import {
  decodePropertyTypes,
  decodeStructType,
  encodePropertyTypes,
  encodeStructType,
} from "./codec.js";

export type TypeKind = "artifact" | "execution";

export interface StoredType {
  id: bigint;
  name: string;
  properties: { [key: string]: PropertyType };
  inputType?: ArtifactStructType;
  outputType?: ArtifactStructType;
}

export type NewType = Omit<StoredType, "id">;

interface TypeRow {
  id: bigint;
  name: string;
  properties: string;
  inputType: string | null;
  outputType: string | null;
}

const fromRow = (row: TypeRow): StoredType => ({
  id: row.id,
  name: row.name,
  properties: decodePropertyTypes(row.properties),
  inputType: decodeStructType(row.inputType),
  outputType: decodeStructType(row.outputType),
});

const columns = (type: NewType) => ({
  name: type.name,
  properties: encodePropertyTypes(type.properties),
  inputType: encodeStructType(type.inputType),
  outputType: encodeStructType(type.outputType),
});

/** Thrown by insert when another type of the same kind already has the name. */
export class TypeNameTaken extends Error {}

export class TypeStore {
  constructor(private readonly prisma: Prisma) {}

  async byName(kind: TypeKind, name: string): Promise<StoredType | undefined> {
    const row = await this.prisma.metadataType.findUnique({ where: { kind_name: { kind, name } } });
    return row ? fromRow(row) : undefined;
  }

  async byId(kind: TypeKind, id: bigint): Promise<StoredType | undefined> {
    const row = await this.prisma.metadataType.findFirst({ where: { id, kind } });
    return row ? fromRow(row) : undefined;
  }

  async list(kind: TypeKind): Promise<StoredType[]> {
    const rows = await this.prisma.metadataType.findMany({ where: { kind }, orderBy: { id: "asc" } });
    return rows.map(fromRow);
  }

  async insert(kind: TypeKind, type: NewType): Promise<StoredType> {
    try {
      return fromRow(await this.prisma.metadataType.create({ data: { kind, ...columns(type) } }));
    } catch (err) {
      if (prismaErrorKind(err) === "unique") throw new TypeNameTaken(type.name);
      throw err;
    }
  }

  async replace(id: bigint, type: NewType): Promise<StoredType> {
    return fromRow(await this.prisma.metadataType.update({ where: { id }, data: columns(type) }));
  }

  /** Deletes a type; "in-use" when artifacts or executions still refer to it. */
  async delete(kind: TypeKind, id: bigint): Promise<"deleted" | "missing" | "in-use"> {
    try {
      const { count } = await this.prisma.metadataType.deleteMany({ where: { id, kind } });
      return count === 1 ? "deleted" : "missing";
    } catch (err) {
      if (prismaErrorKind(err) === "foreign-key") return "in-use";
      throw err;
    }
  }
}
