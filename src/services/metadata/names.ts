// Resource names as the REST paths and gRPC callers carry them.
import { invalidArgument } from "../../errors.js";
import type { TypeKind } from "../../store/metadata/type-store.js";

const collection = { artifact: "artifact_types/", execution: "execution_types/" } as const;
const instances = { artifact: "artifacts", execution: "executions" } as const;

/** `artifact_types/kubeflow.org/alpha/model` → `kubeflow.org/alpha/model` (the prefix is stripped once). */
export function typeNameFrom(kind: TypeKind, name: string): string {
  return name.startsWith(collection[kind]) ? name.slice(collection[kind].length) : name;
}

/** `artifact_types/<type>/artifacts/<id>` → the type name and the id. */
export function nodeNameParts(kind: TypeKind, name: string): { typeName: string; id: bigint } {
  const rest = typeNameFrom(kind, name);
  const marker = `/${instances[kind]}/`;
  const at = rest.lastIndexOf(marker);
  const id = at < 0 ? "" : rest.slice(at + marker.length);
  if (!/^\d{1,19}$/.test(id)) {
    throw invalidArgument(`malformed ${kind} name "${name}": expected ${collection[kind]}<type>/${instances[kind]}/<id>`);
  }
  return { typeName: rest.slice(0, at), id: BigInt(id) };
}

/** `artifacts/<id>` or `executions/<id>` → which side of the events and the id. */
export function eventOwnerParts(name: string): { side: TypeKind; id: bigint } {
  const match = /^(artifacts|executions)\/(\d{1,19})$/.exec(name);
  if (!match) throw invalidArgument(`malformed events name "${name}": expected artifacts/<id> or executions/<id>`);
  return { side: match[1] === "artifacts" ? "artifact" : "execution", id: BigInt(match[2]) };
}
