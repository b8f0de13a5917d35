// Domain rules for artifacts and executions (one instance per kind): they are created under a
// type named in the path, validated against it, and only reachable through their own type.
import { invalidArgument, notFound } from "../../errors.js";
import type { NewNode, NodeStore, StoredNode } from "../../store/metadata/node-store.js";
import type { StoredType, TypeKind, TypeStore } from "../../store/metadata/type-store.js";
import { nodeNameParts, typeNameFrom } from "./names.js";
import { validateProperties } from "./property-rules.js";

export type NodeInput = Omit<NewNode, "typeId">;

export class NodeRegistry {
  constructor(
    readonly kind: TypeKind,
    private readonly types: TypeStore,
    private readonly nodes: NodeStore,
  ) {}

  /** `parent` names the type (`<kind>_types/<type name>`); a type_id in the body is ignored. */
  async create(parent: string, node: NodeInput, idGiven: boolean): Promise<StoredNode> {
    if (idGiven) throw invalidArgument(`id must be left unset when creating an ${this.kind}`);
    const type = await this.typeNamed(typeNameFrom(this.kind, parent));
    validateProperties(type, node.properties, node.customProperties);
    return this.nodes.insert(this.kind, { ...node, typeId: type.id });
  }

  async get(name: string): Promise<StoredNode> {
    const { typeName, id } = nodeNameParts(this.kind, name);
    const type = await this.typeNamed(typeName);
    const node = await this.nodes.byId(this.kind, id);
    if (!node || node.typeId !== type.id) throw notFound(`${this.kind} ${id} of type "${typeName}" not found`);
    return node;
  }

  /** An empty name lists every node of the kind; a type that does not exist has none. */
  async list(name: string): Promise<StoredNode[]> {
    if (name === "") return this.nodes.list(this.kind);
    const type = await this.types.byName(this.kind, typeNameFrom(this.kind, name));
    return type ? this.nodes.list(this.kind, type.id) : [];
  }

  async delete(name: string): Promise<void> {
    const node = await this.get(name);
    if (!(await this.nodes.delete(this.kind, node.id))) throw notFound(`${this.kind} ${node.id} not found`);
  }

  private async typeNamed(typeName: string): Promise<StoredType> {
    const type = await this.types.byName(this.kind, typeName);
    if (!type) throw notFound(`${this.kind} type "${typeName}" not found`);
    return type;
  }
}
