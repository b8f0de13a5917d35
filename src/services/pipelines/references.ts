// Resource references: a run or job belongs to one experiment (EXPERIMENT/OWNER); a run may be
// created by a job (JOB/CREATOR). They are stored as columns and echoed in that order.
import { create } from "@bufbuild/protobuf";
import {
  Relationship,
  ResourceReferenceSchema,
  ResourceType,
  type ResourceKey,
  type ResourceReference,
} from "../../../gen/proto/kfp/resource_reference_pb.js";
import { invalidArgument } from "../../errors.js";

export interface Owners {
  experimentId?: string;
  jobId?: string;
}

// The relationship each reference type has; an unset relationship means that one.
const relationshipOf: Partial<Record<ResourceType, Relationship>> = {
  [ResourceType.EXPERIMENT]: Relationship.OWNER,
  [ResourceType.JOB]: Relationship.CREATOR,
};

const typeNames = (types: readonly ResourceType[]) => types.map((t) => ResourceType[t]).join(" or ");

/** Reads references, accepting the types in `allowed`, at most one of each. */
export function parseReferences(references: readonly ResourceReference[], allowed: readonly ResourceType[]): Owners {
  const owners: Owners = {};
  for (const reference of references) {
    const type = reference.key?.type ?? ResourceType.UNKNOWN_RESOURCE_TYPE;
    const id = reference.key?.id ?? "";
    if (!allowed.includes(type)) {
      throw invalidArgument(`unsupported resource reference type ${ResourceType[type] ?? type}: expected ${typeNames(allowed)}`);
    }
    const expected = relationshipOf[type]!;
    if (reference.relationship !== expected && reference.relationship !== Relationship.UNKNOWN_RELATIONSHIP) {
      throw invalidArgument(
        `a ${ResourceType[type]} reference must have relationship ${Relationship[expected]}, ` +
          `got ${Relationship[reference.relationship] ?? reference.relationship}`,
      );
    }
    if (id === "") throw invalidArgument(`the ${ResourceType[type]} reference has no id`);
    const field = type === ResourceType.EXPERIMENT ? "experimentId" : "jobId";
    if (owners[field] !== undefined) throw invalidArgument(`more than one ${ResourceType[type]} reference`);
    owners[field] = id;
  }
  return owners;
}

export function referencesOf(owners: Owners): ResourceReference[] {
  const reference = (type: ResourceType, id: string) =>
    create(ResourceReferenceSchema, { key: { type, id }, relationship: relationshipOf[type] });
  return [
    ...(owners.experimentId !== undefined ? [reference(ResourceType.EXPERIMENT, owners.experimentId)] : []),
    ...(owners.jobId !== undefined ? [reference(ResourceType.JOB, owners.jobId)] : []),
  ];
}

/** `resource_reference_key` of a list request as a storage filter (undefined: no key given). */
export function ownerFilter(key: ResourceKey | undefined, allowed: readonly ResourceType[]): Owners | undefined {
  if (!key || (key.type === ResourceType.UNKNOWN_RESOURCE_TYPE && key.id === "")) return undefined;
  if (!allowed.includes(key.type)) {
    throw invalidArgument(`resource_reference_key.type must be ${typeNames(allowed)}, got ${ResourceType[key.type] ?? key.type}`);
  }
  if (key.id === "") throw invalidArgument("resource_reference_key.id is required");
  return key.type === ResourceType.EXPERIMENT ? { experimentId: key.id } : { jobId: key.id };
}
