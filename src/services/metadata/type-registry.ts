// Domain rules for artifact types and execution types (one instance per kind).
import { alreadyExists, failedPrecondition, invalidArgument, notFound } from "../../errors.js";
import { TypeNameTaken, type NewType, type StoredType, type TypeKind, type TypeStore } from "../../store/metadata/type-store.js";
import { typeNameFrom } from "./names.js";
import { evolvedDefinition, sameDefinition, validateTypeDefinition } from "./type-rules.js";

export class TypeRegistry {
  constructor(
    readonly kind: TypeKind,
    private readonly store: TypeStore,
  ) {}

  /** Creates a type; an identical existing one is returned as is (creation is idempotent). */
  async create(requested: NewType, requestedId?: bigint): Promise<StoredType> {
    validateTypeDefinition(requested);
    const existing = await this.store.byName(this.kind, requested.name);
    if (!existing) {
      if (requestedId !== undefined) throw invalidArgument(`id must be left unset when creating ${this.kind} type "${requested.name}"`);
      return this.insertOr(requested, () => this.create(requested));
    }
    this.checkId(existing, requestedId);
    if (sameDefinition(existing, requested)) return existing;
    throw alreadyExists(
      `${this.kind} type "${requested.name}" already exists with different properties; ` +
        `add properties with PATCH /api/v1alpha1/${this.kind}_types`,
    );
  }

  /** Adds properties to a type (never removes or retypes one); creates it when missing. */
  async update(requested: NewType, requestedId?: bigint): Promise<StoredType> {
    validateTypeDefinition(requested);
    const existing = await this.store.byName(this.kind, requested.name);
    if (!existing) return this.insertOr(requested, () => this.update(requested, requestedId));
    this.checkId(existing, requestedId);
    const evolved = evolvedDefinition(existing, requested);
    return sameDefinition(existing, evolved) ? existing : this.store.replace(existing.id, evolved);
  }

  /** Makes sure the type exists with at least these properties, keeping any others it has. */
  async ensure(required: NewType): Promise<StoredType> {
    const existing = await this.store.byName(this.kind, required.name);
    return this.update({ ...required, properties: { ...existing?.properties, ...required.properties } });
  }

  /** `name` may carry the `<kind>_types/` prefix of a REST path. */
  async get(name: string): Promise<StoredType> {
    const typeName = typeNameFrom(this.kind, name);
    const type = await this.store.byName(this.kind, typeName);
    if (!type) throw notFound(`${this.kind} type "${typeName}" not found`);
    return type;
  }

  list(): Promise<StoredType[]> {
    return this.store.list(this.kind);
  }

  async delete(name: string): Promise<void> {
    const type = await this.get(name);
    const outcome = await this.store.delete(this.kind, type.id);
    if (outcome === "missing") throw notFound(`${this.kind} type "${type.name}" not found`);
    if (outcome === "in-use") {
      throw failedPrecondition(`${this.kind} type "${type.name}" still has ${this.kind}s; delete them first`);
    }
  }

  private checkId(existing: StoredType, requestedId: bigint | undefined): void {
    if (requestedId !== undefined && requestedId !== existing.id) {
      throw invalidArgument(`${this.kind} type "${existing.name}" has id ${existing.id}, not ${requestedId}`);
    }
  }

  // Two callers may race to create the same name; the loser retries against the winner's row.
  private async insertOr(requested: NewType, retry: () => Promise<StoredType>): Promise<StoredType> {
    try {
      return await this.store.insert(this.kind, requested);
    } catch (err) {
      if (err instanceof TypeNameTaken) return retry();
      throw err;
    }
  }
}
