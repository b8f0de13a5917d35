// google.api.http path templates: parsed once at registration, matched against every request.
//
//   Template  = "/" Segments [ ":" Verb ]
//   Segment   = "*" | "**" | LITERAL | "{" FieldPath [ "=" Segments ] "}"
//
// Unlike the published grammar, `**` need not be last: our metadata rules use
// `{name=artifact_types/**/artifacts/*}`, so `**` may be followed by a fixed-length tail.

/** Matches one path segment exactly (literal), any one segment (`*`), or zero or more (`**`). */
export type SegmentMatcher = { kind: "literal"; value: string } | { kind: "any" } | { kind: "rest" };

/** A `{field.path=...}` capture covering the matchers `[start, end)`. */
export interface TemplateVariable {
  fieldPath: string;
  start: number;
  end: number;
}

export interface PathTemplate {
  source: string;
  segments: readonly SegmentMatcher[];
  variables: readonly TemplateVariable[];
  verb: string | undefined;
}

export function parsePathTemplate(source: string): PathTemplate {
  return new TemplateParser(source).parse();
}

/**
 * Splits a URL path (without query) into decoded segments. The whole path is decoded before
 * splitting, so `%2F` separates segments as it did in the original Go gateway, which matched
 * the decoded path. Throws URIError on malformed percent-encoding.
 */
export function splitPath(path: string): string[] {
  const decoded = decodeURIComponent(path);
  return (decoded.startsWith("/") ? decoded.slice(1) : decoded).split("/");
}

/**
 * Matches decoded path segments against a template, returning the captured values keyed by
 * field path (captures spanning several segments are joined with "/"), or undefined.
 */
export function matchPathTemplate(
  template: PathTemplate,
  segments: readonly string[],
): Record<string, string> | undefined {
  const path = template.verb === undefined ? segments : stripVerb(segments, template.verb);
  if (!path) return undefined;

  const matchers = template.segments;
  const rest = matchers.findIndex((m) => m.kind === "rest");
  const fixedCount = rest < 0 ? matchers.length : matchers.length - 1;
  if (rest < 0 ? path.length !== fixedCount : path.length < fixedCount) return undefined;
  // `**` takes whatever the fixed-length matchers around it leave over; the ones after it
  // shift right by that width.
  const restWidth = path.length - fixedCount;
  const offset = (i: number) => (rest >= 0 && i > rest ? i - 1 + restWidth : i);

  for (let i = 0; i < matchers.length; i++) {
    const matcher = matchers[i];
    if (matcher.kind === "literal" && path[offset(i)] !== matcher.value) return undefined;
  }
  const captured: Record<string, string> = {};
  for (const v of template.variables) {
    captured[v.fieldPath] = path.slice(offset(v.start), offset(v.end)).join("/");
  }
  return captured;
}

/** Removes `:verb` from the last segment; undefined if the segment does not end with it. */
function stripVerb(segments: readonly string[], verb: string): string[] | undefined {
  const last = segments[segments.length - 1];
  const colon = last.lastIndexOf(":");
  if (colon < 0 || last.slice(colon + 1) !== verb) return undefined;
  return [...segments.slice(0, -1), last.slice(0, colon)];
}

const FIELD_PATH = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const LITERAL = /[^/{}*:=]+/y;

class TemplateParser {
  private pos = 0;
  private readonly segments: SegmentMatcher[] = [];
  private readonly variables: TemplateVariable[] = [];

  constructor(private readonly source: string) {}

  parse(): PathTemplate {
    this.expect("/");
    this.parseSegments(true);
    const verb = this.eat(":") ? this.read(LITERAL, "a verb") : undefined;
    if (this.pos < this.source.length) this.fail(`unexpected "${this.source[this.pos]}"`);
    if (this.segments.filter((s) => s.kind === "rest").length > 1) this.fail("more than one **");
    return { source: this.source, segments: this.segments, variables: this.variables, verb };
  }

  private parseSegments(allowVariables: boolean): void {
    do {
      if (this.eat("**")) this.segments.push({ kind: "rest" });
      else if (this.eat("*")) this.segments.push({ kind: "any" });
      else if (this.source[this.pos] === "{") {
        if (!allowVariables) this.fail("nested variable");
        this.parseVariable();
      } else this.segments.push({ kind: "literal", value: this.read(LITERAL, "a path segment") });
    } while (this.eat("/"));
  }

  private parseVariable(): void {
    this.expect("{");
    const fieldPath = this.read(FIELD_PATH, "a field path");
    if (this.variables.some((v) => v.fieldPath === fieldPath)) this.fail(`${fieldPath} bound twice`);
    const start = this.segments.length;
    if (this.eat("=")) this.parseSegments(false);
    else this.segments.push({ kind: "any" }); // `{var}` means `{var=*}`
    this.expect("}");
    this.variables.push({ fieldPath, start, end: this.segments.length });
  }

  private read(pattern: RegExp, what: string): string {
    pattern.lastIndex = this.pos;
    const match = pattern.exec(this.source);
    if (!match) this.fail(`expected ${what}`);
    this.pos += match[0].length;
    return match[0];
  }

  private eat(token: string): boolean {
    if (!this.source.startsWith(token, this.pos)) return false;
    this.pos += token.length;
    return true;
  }

  private expect(token: string): void {
    if (!this.eat(token)) this.fail(`expected "${token}"`);
  }

  private fail(problem: string): never {
    throw new Error(`invalid path template "${this.source}" at ${this.pos}: ${problem}`);
  }
}
