// The REST routes of a set of services, read from their google.api.http rules and compiled once.
import {
  getOption,
  hasOption,
  type DescField,
  type DescMethod,
  type DescMethodUnary,
  type DescService,
} from "@bufbuild/protobuf";
import { http } from "../../gen/proto/google/api/annotations_pb.js";
import type { HttpRule } from "../../gen/proto/google/api/http_pb.js";
import { isSingularScalar, resolveFieldPath } from "./fields.js";
import { matchPathTemplate, parsePathTemplate, type PathTemplate } from "./path-template.js";

/** One REST binding of an RPC as its rule declares it (also what an OpenAPI writer needs). */
export interface HttpBinding {
  method: DescMethodUnary;
  /** Upper-case HTTP method. */
  httpMethod: string;
  template: string;
  /** "" (no body), "*" (the whole request message) or the name of a top-level request field. */
  body: string;
}

export interface Route extends HttpBinding {
  path: PathTemplate;
  /** The request field the body decodes into, when `body` names one. */
  bodyField: DescField | undefined;
  /** Proto-name paths of the fields set by the path or the body; the query cannot set them. */
  boundFields: ReadonlySet<string>;
}

export type RouteLookup =
  | { kind: "match"; route: Route; pathParams: Record<string, string> }
  | { kind: "methodNotAllowed"; allow: string[] }
  | { kind: "notFound" };

/**
 * Every binding of the unary methods of the services, in routing order: services in the given
 * order, methods in declaration order, each primary binding followed by its additional ones.
 */
export function listHttpBindings(services: readonly DescService[]): HttpBinding[] {
  const bindings: HttpBinding[] = [];
  for (const service of services) {
    for (const method of service.methods) {
      if (!isUnary(method) || !hasOption(method, http)) continue;
      const rule = getOption(method, http);
      for (const r of [rule, ...rule.additionalBindings]) bindings.push(bindingOf(method, r));
    }
  }
  return bindings;
}

export class RouteTable {
  readonly routes: readonly Route[];
  private readonly byHttpMethod = new Map<string, Route[]>();

  /** Throws if a rule is malformed, so a bad proto fails at startup rather than per request. */
  constructor(services: readonly DescService[]) {
    this.routes = listHttpBindings(services).map(compileRoute);
    for (const route of this.routes) {
      const list = this.byHttpMethod.get(route.httpMethod) ?? [];
      list.push(route);
      this.byHttpMethod.set(route.httpMethod, list);
    }
  }

  /** The first route of the HTTP method matching the decoded path segments. */
  lookup(httpMethod: string, segments: readonly string[]): RouteLookup {
    for (const route of this.byHttpMethod.get(httpMethod) ?? []) {
      const pathParams = matchPathTemplate(route.path, segments);
      if (pathParams) return { kind: "match", route, pathParams };
    }
    const allow = [...this.byHttpMethod]
      .filter(([m, routes]) => m !== httpMethod && routes.some((r) => matchPathTemplate(r.path, segments)))
      .map(([m]) => m);
    return allow.length > 0 ? { kind: "methodNotAllowed", allow } : { kind: "notFound" };
  }
}

function isUnary(method: DescMethod): method is DescMethodUnary {
  return method.methodKind === "unary";
}

function bindingOf(method: DescMethodUnary, rule: HttpRule): HttpBinding {
  const where = `${method.parent.typeName}.${method.name}`;
  if (rule.responseBody !== "") throw new Error(`${where}: response_body is not supported`);
  const { pattern } = rule;
  switch (pattern.case) {
    case undefined:
      throw new Error(`${where}: http rule without a pattern`);
    case "custom":
      return { method, httpMethod: pattern.value.kind.toUpperCase(), template: pattern.value.path, body: rule.body };
    default:
      return { method, httpMethod: pattern.case.toUpperCase(), template: pattern.value, body: rule.body };
  }
}

function compileRoute(binding: HttpBinding): Route {
  const input = binding.method.input;
  const where = `${binding.method.parent.typeName}.${binding.method.name} ${binding.httpMethod} ${binding.template}`;
  const path = parsePathTemplate(binding.template);
  const boundFields = new Set<string>();
  for (const { fieldPath } of path.variables) {
    const fields = resolveFieldPath(input, fieldPath);
    if (!fields || !isSingularScalar(fields[fields.length - 1])) {
      throw new Error(`${where}: {${fieldPath}} is not a singular scalar field of ${input.typeName}`);
    }
    boundFields.add(fields.map((f) => f.name).join("."));
  }
  let bodyField: DescField | undefined;
  if (binding.body !== "" && binding.body !== "*") {
    bodyField = input.fields.find((f) => f.name === binding.body);
    if (!bodyField) throw new Error(`${where}: body "${binding.body}" is not a field of ${input.typeName}`);
    boundFields.add(bodyField.name);
  }
  return { ...binding, path, bodyField, boundFields };
}
