// `{{name}}` substitution, as Argo does it in templates, arguments and `when` expressions.
//
// This module knows no variable names: callers hand it a lookup. Rules:
// - A token is `{{`, then the shortest run of text up to the next `}}` that holds no other `{{`;
//   its name is that text with surrounding whitespace trimmed (`{{ item }}` names `item`). With
//   nested openers (`{{a{{b}}`) the innermost one is the token, as Argo resolves nested tags.
//   An opener with no closer is plain text.
// - Substitution is one pass: a value that itself contains `{{x}}` is inserted as it is.
// - A name the lookup does not know (it returns undefined) is an error by default, listing every
//   such name at once; with `onMissing: "keep"` the token stays in the text untouched.
import { WorkflowError } from "./workflow-error.js";

/** Resolves a variable name (e.g. `inputs.parameters.x`) to its value, or undefined if unknown. */
export type VariableLookup = (name: string) => string | undefined;

export interface SubstituteOptions {
  /** What to do with a `{{name}}` the lookup does not know: "error" (the default) or "keep". */
  onMissing?: "keep" | "error";
}

/** One or more `{{names}}` could not be resolved; `variables` lists them in order of appearance. */
export class UnresolvedVariableError extends WorkflowError {
  readonly variables: readonly string[];

  constructor(variables: readonly string[]) {
    const list = variables.map((name) => `{{${name}}}`).join(", ");
    super(`unresolved variable${variables.length === 1 ? "" : "s"} ${list}`);
    this.variables = [...variables];
  }
}

// `{{`, then (lazily) any characters as long as no further `{{` starts, then `}}`.
const TOKEN = /\{\{((?:(?!\{\{)[\s\S])*?)\}\}/g;

/** Replaces the tokens of one string; unknown names are added to `missing` and left in place. */
function replaceTokens(text: string, lookup: VariableLookup, missing: string[]): string {
  if (!text.includes("{{")) return text;
  return text.replace(TOKEN, (token: string, inner: string) => {
    const name = inner.trim();
    const value = lookup(name) as string | null | undefined;
    if (value !== undefined && value !== null) return String(value);
    if (!missing.includes(name)) missing.push(name);
    return token;
  });
}

function missingPolicy(options: SubstituteOptions | undefined): "keep" | "error" {
  const onMissing = options?.onMissing ?? "error";
  if (onMissing !== "keep" && onMissing !== "error") throw new TypeError(`onMissing must be "keep" or "error", got ${String(onMissing)}`);
  return onMissing;
}

/** Replaces every `{{ name }}` in `text` with the lookup's value for `name`. */
export function substitute(text: string, lookup: VariableLookup, options?: SubstituteOptions): string {
  const onMissing = missingPolicy(options);
  const missing: string[] = [];
  const result = replaceTokens(text, lookup, missing);
  if (missing.length > 0 && onMissing === "error") throw new UnresolvedVariableError(missing);
  return result;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A deep copy of `value` with every string in it substituted: strings inside arrays and as the
 * values of plain objects (keys are left alone). Numbers, booleans, null and undefined are copied
 * as they are; objects that are not plain (Date, Map, class instances...) are shared, not copied.
 * Shared sub-objects stay shared in the copy. With onMissing "error", the error lists every
 * unresolved name found anywhere in `value`.
 */
export function substituteDeep<T>(value: T, lookup: VariableLookup, options?: SubstituteOptions): T {
  const onMissing = missingPolicy(options);
  const missing: string[] = [];
  const copies = new Map<object, unknown>();

  const copy = (node: unknown): unknown => {
    if (typeof node === "string") return replaceTokens(node, lookup, missing);
    if (node === null || typeof node !== "object") return node;
    const seen = copies.get(node);
    if (seen !== undefined) return seen;
    if (Array.isArray(node)) {
      const out: unknown[] = new Array(node.length);
      copies.set(node, out);
      for (let i = 0; i < node.length; i++) out[i] = copy(node[i]);
      return out;
    }
    if (!isPlainObject(node)) return node;
    const out = Object.create(Object.getPrototypeOf(node) as object | null) as Record<string, unknown>;
    copies.set(node, out);
    for (const key of Object.keys(node)) {
      // defineProperty, so that a key named "__proto__" stays an ordinary property.
      Object.defineProperty(out, key, { value: copy((node as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true });
    }
    return out;
  };

  const result = copy(value) as T;
  if (missing.length > 0 && onMissing === "error") throw new UnresolvedVariableError(missing);
  return result;
}

/**
 * A lookup over several scopes: the first scope that has the name (as its own key, with a value
 * other than undefined) wins. The scopes are read at lookup time, so later changes to them show.
 */
export function scopeLookup(...scopes: Array<Record<string, string>>): VariableLookup {
  return (name) => {
    for (const scope of scopes) {
      if (Object.hasOwn(scope, name)) {
        const value = scope[name];
        if (value !== undefined) return value;
      }
    }
    return undefined;
  };
}

/** The names of the `{{variables}}` in `text`, trimmed, each once, in order of first appearance. */
export function referencedVariables(text: string): string[] {
  const names: string[] = [];
  if (!text.includes("{{")) return names;
  for (const match of text.matchAll(TOKEN)) {
    const name = match[1].trim();
    if (!names.includes(name)) names.push(name);
  }
  return names;
}
