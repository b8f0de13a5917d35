// Loop expansion for tasks and steps: withItems, withParam and withSequence, following Argo 2.x
// (`expandTask`, `processItem`, `expandSequence`, and the `Item` type of v2.5 to v2.12).
//
// Each item becomes one expanded task or step. It is named after the loop's task plus
// `itemLabel(item)` and sees the variables of `itemVariables(item)`:
//
//   item                 label              variables
//   "a"                  (0:a)              item=a
//   5, true, null        (1:5) (2:true) (3:)  item=5 / true / "" (null is the empty string)
//   {b: 2, a: "x"}       (4:a:x,b:2)        item={"a":"x","b":2}, item.a=x, item.b=2
//   [1, "x"]             (5:[1 x])          item=[1,"x"]
//
// - Scalars are written as themselves: strings as they are, booleans true/false, numbers as
//   written in a withParam's JSON (`1.0` stays `1.0`, a 20-digit id keeps its digits; see
//   JsonNumber) and otherwise as JavaScript writes them (which for YAML numbers is what Argo's
//   YAML-to-JSON conversion wrote too).
// - Maps and lists are compact JSON with keys sorted (Go's json.Marshal order); in a map item each
//   key also gives `item.<key>` (nested maps and lists as JSON).
// - The label of a map is its `key:value` pairs sorted as strings and joined by `,`; of a list its
//   elements joined by spaces in brackets (Go's %v of a slice). Argo wrote some of these with Go
//   quirks (JSON-escaped strings; `%!s(float64=1)` for numbers in maps in 2.3): we don't.
import { compareCodePoints } from "./when-expression.js";
import { WorkflowError } from "./workflow-error.js";

/** One iteration of a loop: its value and its 0-based position. */
export type LoopItem = { value: unknown; index: number };

/**
 * A number from a withParam's JSON whose text JavaScript cannot write back as it was (`1.0`,
 * `1e3`, `-0`, integers beyond 2^53): it keeps the text, which is what the loop's variables use.
 * Numbers that round-trip exactly are plain numbers.
 */
export class JsonNumber {
  constructor(readonly text: string) {}

  valueOf(): number {
    return Number(this.text);
  }

  toString(): string {
    return this.text;
  }

  toJSON(): number {
    return Number(this.text);
  }
}

/** withSequence refuses to expand into more items than this (a typo such as count: 1e9 would otherwise exhaust memory). */
export const MAX_SEQUENCE_LENGTH = 100_000;

function isPlainObject(value: object): value is Record<string, unknown> {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  if (typeof value === "object") return (value as object).constructor?.name ?? "object";
  return typeof value;
}

/** Checks that an item is JSON-like (what a YAML or JSON list can hold); `where` names it in errors. */
function checkValue(value: unknown, where: string, depth = 0): void {
  if (depth > 100) throw new WorkflowError(`${where}: nested too deeply`);
  switch (typeof value) {
    case "string":
    case "boolean":
    case "bigint":
      return;
    case "number":
      if (!Number.isFinite(value)) throw new WorkflowError(`${where}: ${value} is not a finite number`);
      return;
    case "object":
      if (value === null || value instanceof JsonNumber) return;
      if (Array.isArray(value)) {
        value.forEach((element, i) => checkValue(element, `${where}[${i}]`, depth + 1));
        return;
      }
      if (isPlainObject(value)) {
        for (const key of Object.keys(value)) checkValue(value[key], `${where}.${key}`, depth + 1);
        return;
      }
  }
  throw new WorkflowError(`${where}: expected a string, number, boolean, list or map, got ${typeName(value)}`);
}

/** Compact JSON with object keys in code point order (as Go's json.Marshal sorts map keys). */
function compactJson(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "boolean":
    case "bigint":
      return String(value);
    case "number":
      if (!Number.isFinite(value)) throw new WorkflowError(`${value} is not a finite number`);
      return String(value);
    case "object":
      if (value === null) return "null";
      if (value instanceof JsonNumber) return value.text;
      if (Array.isArray(value)) return `[${value.map((element) => (element === undefined ? "null" : compactJson(element))).join(",")}]`;
      if (isPlainObject(value)) {
        const keys = Object.keys(value)
          .filter((key) => value[key] !== undefined)
          .sort(compareCodePoints);
        return `{${keys.map((key) => `${JSON.stringify(key)}:${compactJson(value[key])}`).join(",")}}`;
      }
  }
  throw new WorkflowError(`a loop item cannot hold a ${typeName(value)}`);
}

/** The text an item (or a value inside a map item) stands for in `{{item}}` / `{{item.key}}`. */
function itemText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "string") return value;
  return compactJson(value);
}

const withIndexes = (values: readonly unknown[]): LoopItem[] => values.map((value, index) => ({ value, index }));

/** The items of a `withItems` list (as parsed from YAML), in order. */
export function itemsFromWithItems(items: unknown[]): LoopItem[] {
  if (!Array.isArray(items)) throw new WorkflowError(`withItems must be a list, got ${typeName(items)}`);
  items.forEach((item, i) => {
    if (item === undefined) throw new WorkflowError(`withItems[${i}]: expected a string, number, boolean, list or map, got nothing`);
    checkValue(item, `withItems[${i}]`);
  });
  return withIndexes(items);
}

// --- withParam: a JSON list, read by our own parser so that numbers keep their text. ---

class JsonSyntaxError extends Error {}

class JsonReader {
  private i = 0;

  constructor(private readonly text: string) {}

  private fail(detail: string): never {
    throw new JsonSyntaxError(`${detail} at position ${this.i}`);
  }

  private skipSpace(): void {
    while (this.i < this.text.length && " \t\n\r".includes(this.text[this.i])) this.i++;
  }

  document(): unknown {
    const value = this.value(0);
    this.skipSpace();
    if (this.i < this.text.length) this.fail(`unexpected ${JSON.stringify(this.text[this.i])} after the JSON value`);
    return value;
  }

  private value(depth: number): unknown {
    if (depth > 512) this.fail("nesting too deep");
    this.skipSpace();
    const c = this.text[this.i];
    if (c === "{") return this.object(depth);
    if (c === "[") return this.array(depth);
    if (c === '"') return this.string();
    if (c === "-" || (c >= "0" && c <= "9")) return this.number();
    for (const [word, value] of [["true", true], ["false", false], ["null", null]] as const) {
      if (this.text.startsWith(word, this.i)) {
        this.i += word.length;
        return value;
      }
    }
    return this.fail(c === undefined ? "unexpected end of input" : `unexpected ${JSON.stringify(c)}`);
  }

  private object(depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.i++;
    this.skipSpace();
    if (this.text[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text[this.i] !== '"') this.fail("expected a string key");
      const key = this.string();
      this.skipSpace();
      if (this.text[this.i] !== ":") this.fail("expected ':'");
      this.i++;
      // defineProperty, so that a key named "__proto__" stays an ordinary property.
      Object.defineProperty(out, key, { value: this.value(depth + 1), enumerable: true, writable: true, configurable: true });
      this.skipSpace();
      const c = this.text[this.i++];
      if (c === "}") return out;
      if (c !== ",") {
        this.i--;
        this.fail("expected ',' or '}'");
      }
    }
  }

  private array(depth: number): unknown[] {
    const out: unknown[] = [];
    this.i++;
    this.skipSpace();
    if (this.text[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth + 1));
      this.skipSpace();
      const c = this.text[this.i++];
      if (c === "]") return out;
      if (c !== ",") {
        this.i--;
        this.fail("expected ',' or ']'");
      }
    }
  }

  private string(): string {
    const start = this.i;
    let out = "";
    this.i++;
    for (;;) {
      const c = this.text[this.i];
      if (c === undefined) {
        this.i = start;
        this.fail("unterminated string");
      }
      if (c === '"') {
        this.i++;
        return out;
      }
      if (c < " ") this.fail("control character in string");
      if (c !== "\\") {
        out += c;
        this.i++;
        continue;
      }
      const e = this.text[this.i + 1];
      const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
      if (e !== undefined && Object.hasOwn(simple, e)) {
        out += simple[e];
        this.i += 2;
      } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(this.text.slice(this.i + 2, this.i + 6))) {
        out += String.fromCharCode(Number.parseInt(this.text.slice(this.i + 2, this.i + 6), 16));
        this.i += 6;
      } else {
        this.fail("invalid escape in string");
      }
    }
  }

  private number(): number | JsonNumber {
    const match = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    match.lastIndex = this.i;
    const found = match.exec(this.text);
    if (!found) this.fail("invalid number");
    const text = found[0];
    this.i += text.length;
    const value = Number(text);
    return String(value) === text ? value : new JsonNumber(text);
  }
}

/**
 * The items of a `withParam`, whose (substituted) text must be a JSON list of scalars, lists or
 * maps. Numbers keep their JSON text (see JsonNumber).
 */
export function itemsFromWithParam(json: string): LoopItem[] {
  const trimmed = String(json).trim();
  const shown = trimmed.length > 200 ? `${trimmed.slice(0, 200)}…` : trimmed;
  let parsed: unknown;
  try {
    parsed = new JsonReader(trimmed).document();
  } catch (err) {
    if (!(err instanceof JsonSyntaxError)) throw err;
    throw new WorkflowError(`withParam value is not a JSON list: ${shown === "" ? "(empty)" : shown} (${err.message})`);
  }
  if (!Array.isArray(parsed)) throw new WorkflowError(`withParam value is not a JSON list: ${shown}`);
  return withIndexes(parsed);
}

// --- withSequence ---

export interface SequenceSpec {
  count?: string | number;
  start?: string | number;
  end?: string | number;
  format?: string;
}

/** A withSequence bound: absent (undefined, null or ""), or an integer, as Go's strconv.Atoi reads it. */
function sequenceBound(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new WorkflowError(`withSequence ${field} must be an integer, got ${value}`);
    return value;
  }
  if (typeof value !== "string") throw new WorkflowError(`withSequence ${field} must be an integer, got ${typeName(value)}`);
  const text = value.trim();
  if (text === "") return undefined;
  if (!/^[+-]?[0-9]+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new WorkflowError(`withSequence ${field} must be an integer, got "${value}"`);
  }
  return Number(text);
}

type Verb = "d" | "v" | "b" | "o" | "O" | "x" | "X";
interface IntegerDirective {
  flags: { minus: boolean; plus: boolean; space: boolean; zero: boolean; sharp: boolean };
  width?: number;
  precision?: number;
  verb: Verb;
}

/**
 * Splits a Go printf format meant for one integer into the text before, the directive and the
 * text after. Supported: flags `+ - # space 0`, a width, a precision, and the verbs d v b o O x X;
 * `%%` is a percent sign.
 */
function parseIntegerFormat(format: string): { before: string; directive: IntegerDirective; after: string } {
  const parts: string[] = [""];
  let directive: IntegerDirective | undefined;
  for (let i = 0; i < format.length; ) {
    const c = format[i];
    if (c !== "%") {
      parts[parts.length - 1] += c;
      i++;
      continue;
    }
    if (format[i + 1] === "%") {
      parts[parts.length - 1] += "%";
      i += 2;
      continue;
    }
    const m = /^%([-+# 0]*)([0-9]*)(?:\.([0-9]*))?(.?)/su.exec(format.slice(i))!;
    const [whole, flagText, widthText, precisionText, verb] = m;
    if (verb === "") throw new WorkflowError(`withSequence format "${format}" ends in an incomplete directive`);
    if (!"dvboOxX".includes(verb)) {
      throw new WorkflowError(`withSequence format "${format}": %${verb} is not an integer verb (use one of %d %v %b %o %O %x %X)`);
    }
    if (directive) throw new WorkflowError(`withSequence format "${format}" has more than one directive; it formats a single number`);
    const minus = flagText.includes("-");
    directive = {
      flags: { minus, plus: flagText.includes("+"), space: flagText.includes(" "), zero: flagText.includes("0") && !minus, sharp: flagText.includes("#") },
      width: widthText === "" ? undefined : Number(widthText),
      precision: precisionText === undefined ? undefined : Number(precisionText || "0"),
      verb: verb as Verb,
    };
    parts.push("");
    i += whole.length;
  }
  if (!directive) throw new WorkflowError(`withSequence format "${format}" has no directive such as %d for the number`);
  return { before: parts[0], directive, after: parts[1] };
}

/** Formats an integer as Go's fmt does for the supported verbs and flags. */
function formatInteger(n: number, { flags, width, precision, verb }: IntegerDirective): string {
  const negative = n < 0;
  const base = verb === "b" ? 2 : verb === "o" || verb === "O" ? 8 : verb === "x" || verb === "X" ? 16 : 10;
  let digits = Math.abs(n).toString(base);
  if (verb === "X") digits = digits.toUpperCase();
  const pad = (text: string) => {
    if (width === undefined || text.length >= width) return text;
    return flags.minus ? text.padEnd(width, " ") : text.padStart(width, " ");
  };
  if (precision !== undefined) {
    // An explicit precision is the minimum number of digits; `%.0d` prints nothing for 0.
    if (precision === 0 && n === 0) return pad("");
    digits = digits.padStart(precision, "0");
  } else if (flags.zero && width !== undefined) {
    // Zero padding fills the width, leaving room for the sign (but not for a 0x prefix, as in Go).
    digits = digits.padStart(negative || flags.plus || flags.space ? width - 1 : width, "0");
  }
  let prefix = "";
  if (verb === "O") prefix = "0o";
  else if (flags.sharp) {
    if (verb === "b") prefix = "0b";
    else if (verb === "o" && !digits.startsWith("0")) prefix = "0";
    else if (verb === "x") prefix = "0x";
    else if (verb === "X") prefix = "0X";
  }
  const sign = negative ? "-" : flags.plus ? "+" : flags.space ? " " : "";
  return pad(sign + prefix + digits);
}

/**
 * The items of a `withSequence` (its fields already substituted): the integers from `start`
 * (default 0) to `end` inclusive, counting down if `end` < `start`, or `count` of them counting up
 * from `start`. Exactly one of `count` and `end` must be given. Each value is a string, written
 * with the printf-style `format` (default `%d`).
 */
export function itemsFromWithSequence(sequence: SequenceSpec): LoopItem[] {
  if (sequence === null || typeof sequence !== "object") throw new WorkflowError(`withSequence must be a map, got ${typeName(sequence)}`);
  const start = sequenceBound(sequence.start, "start") ?? 0;
  const count = sequenceBound(sequence.count, "count");
  let end = sequenceBound(sequence.end, "end");
  if (count !== undefined && end !== undefined) throw new WorkflowError("only one of count or end can be defined in withSequence");
  if (count === undefined && end === undefined) throw new WorkflowError("neither end nor count was specified in withSequence");
  if (count !== undefined) {
    if (count < 0) throw new WorkflowError(`withSequence count must not be negative, got ${count}`);
    if (count === 0) return [];
    end = start + count - 1;
  }
  const last = end!;
  const length = Math.abs(last - start) + 1;
  if (length > MAX_SEQUENCE_LENGTH) throw new WorkflowError(`withSequence would expand into ${length} items, more than the limit of ${MAX_SEQUENCE_LENGTH}`);
  const format = sequence.format;
  if (format !== undefined && format !== null && typeof format !== "string") throw new WorkflowError(`withSequence format must be a string, got ${typeName(format)}`);
  const { before, directive, after } = parseIntegerFormat(format || "%d");
  const step = last >= start ? 1 : -1;
  const values: string[] = [];
  for (let i = 0, n = start; i < length; i++, n += step) values.push(before + formatInteger(n, directive) + after);
  return withIndexes(values);
}

// --- What an item gives its expanded task. ---

function isMapItem(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) && isPlainObject(value);
}

/** The variables an item defines: `item`, and `item.<key>` for each key of a map item. */
export function itemVariables(item: LoopItem): Record<string, string> {
  const { value } = item;
  const variables: Record<string, string> = { item: itemText(value) };
  if (isMapItem(value)) {
    for (const key of Object.keys(value)) {
      if (value[key] !== undefined) variables[`item.${key}`] = itemText(value[key]);
    }
  }
  return variables;
}

/** The suffix Argo appends to an expanded task's or step's name, e.g. `(0:a)` or `(1:a:1,b:2)`. */
export function itemLabel(item: LoopItem): string {
  const { value, index } = item;
  let text: string;
  if (Array.isArray(value)) text = `[${value.map(itemText).join(" ")}]`;
  else if (isMapItem(value)) {
    text = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .map((key) => `${key}:${itemText(value[key])}`)
      .sort(compareCodePoints)
      .join(",");
  } else text = itemText(value);
  return `(${index}:${text})`;
}
