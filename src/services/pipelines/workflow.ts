// Argo workflows as pipelines carry them: YAML or JSON text, checked only as far as the original
// server did (apiVersion and kind), plus the workflow's arguments, which become the pipeline's
// parameters and which runs fill in. Pure: no I/O.
import { isMap, isScalar, isSeq, parseAllDocuments, type Document } from "yaml";
import { invalidArgument } from "../../errors.js";

export const argoApiVersion = "argoproj.io/v1alpha1";
export const argoKind = "Workflow";
/** The original server's limit on a pipeline's parameters, serialised as JSON. */
export const maxParametersJsonBytes = 10_000;

export interface WorkflowParameter {
  name: string;
  value?: string;
}

/** An Argo Workflow, loosely: only what pipelines and runs look at has a shape. */
export type Workflow = {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; generateName?: unknown; namespace?: unknown; [key: string]: unknown };
  spec?: {
    entrypoint?: unknown;
    arguments?: { parameters?: unknown; [key: string]: unknown };
    templates?: unknown;
    [key: string]: unknown;
  };
  status?: unknown;
  [key: string]: unknown;
};

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Parses a workflow manifest, YAML or JSON (the first document of a YAML stream, as the
 * original did). Parameter names and values written as YAML numbers or booleans become strings,
 * spelled as written (`1.0` stays "1.0"), as Argo's string fields hold them.
 */
export function parseWorkflow(text: string): Workflow {
  const workflow = parseText(text);
  if (workflow.apiVersion !== argoApiVersion) {
    throw invalidArgument(
      `Unsupported argo version. Expected: ${argoApiVersion}. Received: ${shown(workflow.apiVersion)}`,
    );
  }
  if (workflow.kind !== argoKind) {
    throw invalidArgument(`Unexpected resource type. Expected: ${argoKind}. Received: ${shown(workflow.kind)}`);
  }
  for (const key of ["metadata", "spec"] as const) {
    if (workflow[key] === null) delete workflow[key];
    else if (workflow[key] !== undefined && !isObject(workflow[key])) {
      throw invalidArgument(`invalid workflow: ${key} must be an object`);
    }
  }
  const spec = workflow.spec;
  if (spec?.arguments === null) delete spec.arguments;
  else if (spec?.arguments !== undefined && !isObject(spec.arguments)) {
    throw invalidArgument("invalid workflow: spec.arguments must be an object");
  }
  if (spec?.arguments?.parameters === null) delete spec.arguments.parameters;
  return workflow;
}

/** The workflow's arguments (`spec.arguments.parameters`) as pipeline parameters, in order. */
export function workflowParameters(workflow: Workflow): WorkflowParameter[] {
  const parameters = argumentParameters(workflow).map(({ name, value }) =>
    typeof value === "string" ? { name, value } : { name },
  );
  if (Buffer.byteLength(JSON.stringify(parameters)) > maxParametersJsonBytes) {
    throw invalidArgument(`The input parameter length exceed maximum size of ${maxParametersJsonBytes}.`);
  }
  return parameters;
}

/**
 * A copy of the workflow whose arguments take the given values, in the workflow's own order.
 * A value left undefined keeps the default; a name the workflow does not declare is an error.
 */
export function withParameterValues(workflow: Workflow, values: readonly { name: string; value?: string }[]): Workflow {
  const copy = structuredClone(workflow);
  const byName = new Map(argumentParameters(copy).map((p) => [p.name, p]));
  for (const { name, value } of values) {
    const parameter = byName.get(name);
    if (!parameter) throw invalidArgument(`Unrecognized input parameter: ${name}`);
    if (value !== undefined) parameter.value = value;
  }
  return copy;
}

/** `spec.arguments.parameters`, checked: the live objects of the workflow given. */
function argumentParameters(workflow: Workflow): (JsonObject & { name: string })[] {
  const list = workflow.spec?.arguments?.parameters;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw invalidArgument("invalid workflow: spec.arguments.parameters must be a list");
  const seen = new Set<string>();
  return list.map((parameter: unknown, i) => {
    const where = `spec.arguments.parameters[${i}]`;
    if (!isObject(parameter)) throw invalidArgument(`invalid workflow: ${where} must be an object`);
    const { name, value } = parameter;
    if (typeof name !== "string" || name === "") throw invalidArgument(`invalid workflow: ${where} needs a name`);
    if (seen.has(name)) throw invalidArgument(`invalid workflow: parameter ${name} is declared more than once`);
    seen.add(name);
    if (value !== undefined && value !== null && typeof value !== "string") {
      throw invalidArgument(`invalid workflow: the value of parameter ${name} must be a string`);
    }
    return parameter as JsonObject & { name: string };
  });
}

function parseText(text: string): Workflow {
  const docs = parseAllDocuments(text, { merge: true });
  const doc = docs[0];
  // An empty stream carries its own errors (a stray directive, say).
  const error = doc ? doc.errors[0] : "empty" in docs ? docs.errors[0] : undefined;
  if (error) {
    const json = jsonFallback(text);
    if (json !== undefined) return asWorkflow(json, undefined);
    throw invalidArgument(`invalid workflow: ${firstLine(error.message)}`);
  }
  if (!doc) throw invalidArgument("invalid workflow: the manifest is empty");
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw invalidArgument(`invalid workflow: ${firstLine(err instanceof Error ? err.message : String(err))}`);
  }
  return asWorkflow(value, doc);
}

/** Text YAML rejects but JSON accepts (a JSON object with repeated keys, say). */
function jsonFallback(text: string): unknown {
  if (!text.trimStart().startsWith("{")) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function asWorkflow(value: unknown, doc: Document | undefined): Workflow {
  if (!isObject(value)) throw invalidArgument(`invalid workflow: expected an object, got ${kindOf(value)}`);
  const parameters = (value.spec as Workflow["spec"] | undefined)?.arguments?.parameters;
  if (Array.isArray(parameters)) {
    const nodes = doc?.getIn(["spec", "arguments", "parameters"], true);
    parameters.forEach((parameter: unknown, i) => {
      if (!isObject(parameter)) return;
      const node = isSeq(nodes) ? nodes.items[i] : undefined;
      for (const key of ["name", "value"]) {
        const scalar = isMap(node) ? node.get(key, true) : undefined;
        parameter[key] = asString(parameter[key], scalar);
      }
    });
  }
  return value as Workflow;
}

/** A YAML number or boolean as the string it was written as; other values unchanged. */
function asString(value: unknown, node: unknown): unknown {
  if (typeof value !== "number" && typeof value !== "boolean" && typeof value !== "bigint") return value;
  if (isScalar(node) && node.type === "PLAIN" && node.source) return node.source;
  return String(value);
}

function kindOf(value: unknown): string {
  if (value === null || value === undefined) return "nothing";
  if (Array.isArray(value)) return "a list";
  return `a ${typeof value}`;
}

const shown = (value: unknown) => (typeof value === "string" ? value : value === undefined ? "" : JSON.stringify(value));

/** yaml's messages end with a code frame; the first line names the problem and its position. */
const firstLine = (message: string) => message.split("\n", 1)[0]!.replace(/:$/, "");
