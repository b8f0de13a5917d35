// Compares our compiled descriptors with ../shared/spec/wire-contract.json, the wire facts of the
// original servers. Each compare* function returns a list of differences (empty = matches), so a
// test can assert on it and a mutated contract can prove that a difference is noticed.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import {
  createRegistry,
  getOption,
  ScalarType,
  type DescField,
  type DescFile,
  type DescMethod,
  type Registry,
} from "@bufbuild/protobuf";
import { Edition } from "@bufbuild/protobuf/wkt";
import { http } from "../../gen/proto/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/proto/google/api/http_pb.js";

export interface ContractField {
  name: string;
  number: number;
  /** Scalar name (`int64`) or full name of a message/enum; for maps, the value type. */
  type: string;
  repeated?: boolean;
  oneof?: string;
  map?: boolean;
  keyType?: string;
}

export interface ContractMessage {
  /** The original .proto file, a key of `WireContract.syntax`. */
  file: string;
  fields: ContractField[];
}

/** `{get|put|post|delete|patch: path, custom?: {kind, path}, body?, response_body?, additional_bindings?}` */
export type ContractHttpRule = Record<string, unknown>;

export interface ContractRpc {
  name: string;
  input: string;
  output: string;
  http?: ContractHttpRule;
}

export interface WireContract {
  messages: Record<string, ContractMessage>;
  enums: Record<string, Record<string, number>>;
  services: Record<string, ContractRpc[]>;
  syntax: Record<string, string>;
}

const knownFieldKeys = new Set(["name", "number", "type", "repeated", "oneof", "map", "keyType"]);
const httpVerbs = ["get", "put", "post", "delete", "patch"] as const;
const knownHttpKeys = new Set<string>([...httpVerbs, "custom", "body", "response_body", "additional_bindings"]);

const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

export function loadWireContract(file = path.resolve(repoRoot, "../shared/spec/wire-contract.json")): WireContract {
  return JSON.parse(readFileSync(file, "utf8")) as WireContract;
}

/** Imports every `file_*` export of the generated `*_pb.ts` modules under `genDir`. */
export async function loadGeneratedRegistry(genDir = path.join(repoRoot, "gen/proto")): Promise<Registry> {
  const files: DescFile[] = [];
  for (const entry of readdirSync(genDir, { recursive: true, encoding: "utf8" }).sort()) {
    if (!entry.endsWith("_pb.ts")) continue;
    const module = (await import(pathToFileURL(path.join(genDir, entry)).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (name.startsWith("file_")) files.push(value as DescFile);
    }
  }
  return createRegistry(...files);
}

function syntaxOf(file: DescFile): string {
  switch (file.edition) {
    case Edition.EDITION_PROTO2:
      return "proto2";
    case Edition.EDITION_PROTO3:
      return "proto3";
    default:
      return `edition ${file.edition}`;
  }
}

function scalarName(scalar: ScalarType): string {
  return ScalarType[scalar].toLowerCase();
}

/** Our field in the contract's shape. */
function describeField(field: DescField): ContractField {
  // For lists and maps, scalar/message/enum describe the element or value type.
  const type = field.scalar !== undefined ? scalarName(field.scalar) : (field.message ?? field.enum).typeName;
  const described: ContractField = { name: field.name, number: field.number, type };
  if (field.fieldKind === "list") described.repeated = true;
  if (field.fieldKind === "map") {
    described.map = true;
    described.keyType = scalarName(field.mapKey);
  }
  if (field.oneof) described.oneof = field.oneof.name;
  return described;
}

// Packing changes the wire encoding of repeated numbers and enums; it follows the file's syntax.
function isPackable(field: Extract<DescField, { fieldKind: "list" }>): boolean {
  if (field.listKind === "enum") return true;
  return field.listKind === "scalar" && field.scalar !== ScalarType.STRING && field.scalar !== ScalarType.BYTES;
}

export function compareMessage(contract: WireContract, registry: Registry, typeName: string): string[] {
  const expected = contract.messages[typeName];
  if (!expected) return [`${typeName}: not in the contract`];
  const desc = registry.getMessage(typeName);
  if (!desc) return [`${typeName}: message missing`];
  const diffs: string[] = [];

  const expectedSyntax = contract.syntax[expected.file];
  if (expectedSyntax === undefined) {
    diffs.push(`${typeName}: contract names no syntax for ${expected.file}`);
  } else if (syntaxOf(desc.file) !== expectedSyntax) {
    diffs.push(`${typeName}: ${expected.file} is ${expectedSyntax}, our ${desc.file.name}.proto is ${syntaxOf(desc.file)}`);
  }

  const contractByNumber = new Map(expected.fields.map((f) => [f.number, f]));
  for (const want of expected.fields) {
    const at = `${typeName}.${want.name}`;
    for (const key of Object.keys(want)) {
      if (!knownFieldKeys.has(key)) diffs.push(`${at}: contract key "${key}" is not compared; extend compare-descriptors.ts`);
    }
    const field = desc.fields.find((f) => f.name === want.name);
    if (!field) {
      diffs.push(`${at}: field missing (number ${want.number})`);
      continue;
    }
    const got = describeField(field);
    if (got.number !== want.number) diffs.push(`${at}: number ${got.number}, contract ${want.number}`);
    if (got.type !== want.type) diffs.push(`${at}: type ${got.type}, contract ${want.type}`);
    if (!!got.repeated !== !!want.repeated) diffs.push(`${at}: repeated ${!!got.repeated}, contract ${!!want.repeated}`);
    if (!!got.map !== !!want.map) diffs.push(`${at}: map ${!!got.map}, contract ${!!want.map}`);
    if (got.map && want.map && got.keyType !== want.keyType) diffs.push(`${at}: map key type ${got.keyType}, contract ${want.keyType}`);
    if (got.oneof !== want.oneof) diffs.push(`${at}: oneof ${got.oneof}, contract ${want.oneof}`);
    if (field.fieldKind === "list" && isPackable(field) && expectedSyntax !== undefined) {
      const wantPacked = expectedSyntax === "proto3";
      if (field.packed !== wantPacked) diffs.push(`${at}: packed ${field.packed}, ${expectedSyntax} default ${wantPacked}`);
    }
  }

  // Fields we add must not take a number the original gives to another field.
  for (const field of desc.fields) {
    const owner = contractByNumber.get(field.number);
    if (owner && owner.name !== field.name) {
      diffs.push(`${typeName}.${field.name}: number ${field.number} belongs to ${owner.name} in the contract`);
    }
  }
  return diffs;
}

export function compareEnum(contract: WireContract, registry: Registry, typeName: string): string[] {
  const expected = contract.enums[typeName];
  if (!expected) return [`${typeName}: not in the contract`];
  const desc = registry.getEnum(typeName);
  if (!desc) return [`${typeName}: enum missing`];
  const diffs: string[] = [];
  for (const [name, number] of Object.entries(expected)) {
    const value = desc.values.find((v) => v.name === name);
    if (!value) diffs.push(`${typeName}.${name}: value missing (number ${number})`);
    else if (value.number !== number) diffs.push(`${typeName}.${name}: number ${value.number}, contract ${number}`);
  }
  const contractNames = new Map(Object.entries(expected).map(([name, number]) => [number, name]));
  for (const value of desc.values) {
    const owner = contractNames.get(value.number);
    if (owner !== undefined && owner !== value.name && !(value.name in expected)) {
      diffs.push(`${typeName}.${value.name}: number ${value.number} belongs to ${owner} in the contract`);
    }
  }
  return diffs;
}

/** One HTTP binding in a canonical, printable form: `POST /x body=y [+ GET /z]`. */
interface Binding {
  verb: string;
  path: string;
  body: string;
  responseBody: string;
  additional: Binding[];
}

function bindingFromRule(rule: HttpRule): Binding {
  const pattern = rule.pattern;
  return {
    verb: pattern.case === "custom" ? `custom:${pattern.value.kind}` : (pattern.case ?? "none"),
    path: pattern.case === "custom" ? pattern.value.path : (pattern.value ?? ""),
    body: rule.body,
    responseBody: rule.responseBody,
    additional: rule.additionalBindings.map(bindingFromRule),
  };
}

function bindingFromContract(rule: ContractHttpRule, unknownKeys: string[]): Binding {
  for (const key of Object.keys(rule)) if (!knownHttpKeys.has(key)) unknownKeys.push(key);
  let verb = "none";
  let path = "";
  for (const candidate of httpVerbs) {
    if (typeof rule[candidate] === "string") {
      verb = candidate;
      path = rule[candidate];
    }
  }
  const custom = rule.custom as { kind?: string; path?: string } | undefined;
  if (custom) {
    verb = `custom:${custom.kind ?? ""}`;
    path = custom.path ?? "";
  }
  const extra = rule.additional_bindings as ContractHttpRule | ContractHttpRule[] | undefined;
  const additional = extra === undefined ? [] : Array.isArray(extra) ? extra : [extra];
  return {
    verb,
    path,
    body: typeof rule.body === "string" ? rule.body : "",
    responseBody: typeof rule.response_body === "string" ? rule.response_body : "",
    additional: additional.map((r) => bindingFromContract(r, unknownKeys)),
  };
}

function formatBinding(b: Binding): string {
  let text = `${b.verb.toUpperCase()} ${b.path}`;
  if (b.body) text += ` body=${b.body}`;
  if (b.responseBody) text += ` response_body=${b.responseBody}`;
  for (const extra of b.additional) text += ` [+ ${formatBinding(extra)}]`;
  return text;
}

/** `VERB path` of a binding and its additional bindings, for route collision checks. */
function routes(b: Binding): string[] {
  return [`${b.verb.toUpperCase()} ${b.path}`, ...b.additional.flatMap(routes)];
}

function ourBinding(method: DescMethod): Binding | undefined {
  const rule = getOption(method, http);
  return rule.pattern.case === undefined && rule.additionalBindings.length === 0 ? undefined : bindingFromRule(rule);
}

export function compareService(contract: WireContract, registry: Registry, typeName: string): string[] {
  const expected = contract.services[typeName];
  if (!expected) return [`${typeName}: not in the contract`];
  const desc = registry.getService(typeName);
  if (!desc) return [`${typeName}: service missing`];
  const diffs: string[] = [];
  const contractRoutes = new Set<string>();

  for (const want of expected) {
    const at = `${typeName}.${want.name}`;
    const unknownKeys: string[] = [];
    const wantBinding = want.http ? bindingFromContract(want.http, unknownKeys) : undefined;
    for (const key of unknownKeys) diffs.push(`${at}: contract http key "${key}" is not compared; extend compare-descriptors.ts`);
    if (wantBinding) routes(wantBinding).forEach((r) => contractRoutes.add(r));

    const method = desc.methods.find((m) => m.name === want.name);
    if (!method) {
      diffs.push(`${at}: rpc missing`);
      continue;
    }
    if (method.methodKind !== "unary") diffs.push(`${at}: ${method.methodKind}, contract unary`);
    if (method.input.typeName !== want.input) diffs.push(`${at}: input ${method.input.typeName}, contract ${want.input}`);
    if (method.output.typeName !== want.output) diffs.push(`${at}: output ${method.output.typeName}, contract ${want.output}`);
    const gotBinding = ourBinding(method);
    const got = gotBinding ? formatBinding(gotBinding) : "no http rule";
    const wanted = wantBinding ? formatBinding(wantBinding) : "no http rule";
    if (got !== wanted) diffs.push(`${at}: http ${got}, contract ${wanted}`);
  }

  // Order matters to REST routing (first matching pattern wins); our extra RPCs may sit between.
  const contractNames = expected.map((r) => r.name);
  const ourOrder = desc.methods.map((m) => m.name).filter((name) => contractNames.includes(name));
  const wantOrder = contractNames.filter((name) => ourOrder.includes(name));
  if (ourOrder.join() !== wantOrder.join()) {
    diffs.push(`${typeName}: rpc order ${ourOrder.join(", ")}; contract ${wantOrder.join(", ")}`);
  }

  // RPCs we add must not take over a route of the original.
  for (const method of desc.methods) {
    if (contractNames.includes(method.name)) continue;
    const binding = ourBinding(method);
    for (const route of binding ? routes(binding) : []) {
      if (contractRoutes.has(route)) diffs.push(`${typeName}.${method.name}: extra rpc binds ${route}, a route of the contract`);
    }
  }
  return diffs;
}

/** Every difference between the contract and our descriptors. */
export function compareContract(contract: WireContract, registry: Registry): string[] {
  return [
    ...Object.keys(contract.messages).flatMap((name) => compareMessage(contract, registry, name)),
    ...Object.keys(contract.enums).flatMap((name) => compareEnum(contract, registry, name)),
    ...Object.keys(contract.services).flatMap((name) => compareService(contract, registry, name)),
  ];
}
