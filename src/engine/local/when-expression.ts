// Evaluates a task's or step's `when`, after its {{variables}} were substituted, the way Argo 2.x
// did: Argo parses the text with govaluate, turns every bare identifier (a govaluate "variable")
// into a string literal, and evaluates. This is our own tokenizer and recursive-descent parser
// following govaluate's rules:
//
// Values
// - Numbers: decimal digits with an optional point (`5`, `-2.5`, `.5`, `1.`) and `0x` hex, all
//   float64. No exponents: `1e5` is the number 1 followed by the word `e5`, an error.
// - Strings in double or single quotes; a backslash takes the next character literally (`\"` is
//   `"`, `\n` is `n`).
// - `true` and `false` are booleans.
// - A bare word (a letter, then letters, digits and `_`) is a string: after substituting an
//   unquoted variable, `heads == heads` compares two strings and is true, which is why Argo made
//   the conversion. `[any text]` is a bracketed word, also a string. A bare word holding a `.`
//   (`v1.2`, `a.b`) is, for govaluate, a field accessor that Argo never converted, so it always
//   failed: it is an error here too, with a hint to quote it. Words follow each other only with an
//   operator between them: `hello world == x` is a syntax error, as in Argo; quote such values.
//
// Operators, loosest first: `||`; `&&`; comparisons `==` `!=` `<` `<=` `>` `>=` `=~` `!~`;
// `+` `-`; `*` `/` `%`; prefixes `!` and `-`, which bind to the single value (or parenthesized
// expression) after them, so `!a == b` is `(!a) == b`. Same-precedence operators group to the
// left. Parentheses group. An operator is the longest run of symbol characters, as govaluate reads
// them, so `a ==-1` holds the unknown operator `==-`: put spaces between operators.
//
// Types, as govaluate checks them
// - `==` and `!=` never fail: values of different types are simply unequal, so `5 == "5"` is
//   false; numbers compare numerically (`5 == 5.0`), strings exactly, booleans as booleans.
// - `<` `<=` `>` `>=` need two numbers (numeric order) or two strings (order of Unicode code
//   points, i.e. Go's byte-wise order of UTF-8); anything else, such as `"10" > 5`, is an error.
// - `=~` and `!~` need a string on the left and a regular expression (a string) on the right; the
//   match is unanchored. Leading Go flag groups such as `(?i)` are honoured.
// - `&&`, `||` and `!` need booleans. `&&` and `||` short-circuit: `false && x` is false and
//   `true || x` is true without looking at `x`.
// - `+` adds two numbers, or, if either side is a string, concatenates (numbers written as Go's %v
//   writes them); `-` `*` `/` `%` need numbers.
// - The result must be a boolean.
//
// Deliberate differences from govaluate
// - A quoted string ends at the same kind of quote that opened it (govaluate ends it at either
//   kind, so `"it's"` broke there); an apostrophe in a double-quoted value now works.
// - Quoted strings that look like dates stay strings (govaluate turned e.g. "2020-01-01" into a
//   Unix time, so that it compared as a number).
// - Operators Argo/KFP workflows do not use are rejected with a clear error: `**`, bitwise
//   `& | ^ << >> ~`, ternary `? :`, `??`, `in`, `,` and function calls.
// - The empty string is true (Argo runs a task whose `when` is empty); text that is only
//   whitespace is an error (in Argo too).
import { WorkflowError } from "./workflow-error.js";

/** A `when` expression that does not parse or cannot be evaluated. */
export class WhenExpressionError extends WorkflowError {
  /** The expression, as given (after substitution). */
  readonly expression: string;
  /** 0-based offset in `expression` of the offending token or operator, when there is one. */
  readonly position: number | undefined;

  constructor(kind: "syntax" | "evaluation", expression: string, detail: string, position?: number) {
    const where = position === undefined ? "" : ` (at position ${position})`;
    const prefix = kind === "syntax" ? "invalid when expression" : "cannot evaluate when expression";
    const shown = expression.length > 300 ? `${expression.slice(0, 300)}…` : expression;
    super(`${prefix} '${shown}': ${detail}${where}`);
    this.expression = expression;
    this.position = position;
  }
}

type Value = number | string | boolean;

type Token =
  | { kind: "value"; value: Value; pos: number; text: string }
  | { kind: "op"; op: string; pos: number }
  | { kind: "lparen" | "rparen"; pos: number }
  | { kind: "end"; pos: number };

type Node =
  | { type: "literal"; value: Value; pos: number }
  | { type: "unary"; op: string; operand: Node; pos: number }
  | { type: "binary"; op: string; left: Node; right: Node; pos: number };

const SUPPORTED_OPERATORS = new Set(["==", "!=", "<", "<=", ">", ">=", "=~", "!~", "&&", "||", "!", "+", "-", "*", "/", "%"]);
// govaluate knows these, but nothing in Argo/KFP workflows needs them.
const UNSUPPORTED_OPERATORS = new Set(["**", "&", "|", "^", "<<", ">>", "~", "?", ":", "??", ","]);
const COMPARATORS = new Set(["==", "!=", "<", "<=", ">", ">=", "=~", "!~"]);
const PREFIXES = new Set(["!", "-"]);

const isSpace = (c: string) => /^\s$/u.test(c);
const isLetter = (c: string) => /^\p{L}$/u.test(c);
const isDigit = (c: string) => /^\p{Nd}$/u.test(c);
const isQuote = (c: string) => c === '"' || c === "'";
const isWordChar = (c: string) => isLetter(c) || isDigit(c) || c === "_" || c === ".";
const isNumberChar = (c: string) => isDigit(c) || c === ".";
// What govaluate reads as part of an operator: anything but letters, digits, brackets, quotes.
const isSymbolChar = (c: string) => !(isSpace(c) || isLetter(c) || isDigit(c) || isQuote(c) || "()[]".includes(c));

/** Orders strings by Unicode code point, which is Go's byte-wise order of their UTF-8. */
export function compareCodePoints(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const ca = a.codePointAt(i)!;
    const cb = b.codePointAt(j)!;
    if (ca !== cb) return ca < cb ? -1 : 1;
    i += ca > 0xffff ? 2 : 1;
    j += cb > 0xffff ? 2 : 1;
  }
  return Number(i < a.length) - Number(j < b.length);
}

class Tokenizer {
  private i = 0;
  readonly tokens: Token[] = [];

  constructor(private readonly text: string) {}

  private fail(detail: string, pos: number): never {
    throw new WhenExpressionError("syntax", this.text, detail, pos);
  }

  private peek(offset = 0): string {
    // Characters, not UTF-16 units: letters outside the BMP are still letters.
    let at = this.i;
    for (let n = 0; n < offset && at < this.text.length; n++) at += this.text.codePointAt(at)! > 0xffff ? 2 : 1;
    if (at >= this.text.length) return "";
    return String.fromCodePoint(this.text.codePointAt(at)!);
  }

  private next(): string {
    const c = this.peek();
    this.i += c.length;
    return c;
  }

  /** Reads characters while `accept` holds; a backslash takes the next character as it is. */
  private readWhile(accept: (c: string) => boolean, escapes: boolean): string {
    let out = "";
    for (let c = this.peek(); c !== "" && (accept(c) || (escapes && c === "\\")); c = this.peek()) {
      const at = this.i;
      this.next();
      if (escapes && c === "\\") {
        const escaped = this.next();
        if (escaped === "") this.fail("dangling backslash", at);
        out += escaped;
      } else {
        out += c;
      }
    }
    return out;
  }

  run(): Token[] {
    for (;;) {
      while (this.peek() !== "" && isSpace(this.peek())) this.next();
      const pos = this.i;
      const c = this.peek();
      if (c === "") break;
      if (isNumberChar(c)) this.number(pos);
      else if (isLetter(c)) this.word(pos);
      else if (isQuote(c)) this.quoted(pos);
      else if (c === "[") this.bracketed(pos);
      else if (c === "(" || c === ")") {
        this.next();
        this.tokens.push({ kind: c === "(" ? "lparen" : "rparen", pos });
      } else this.operator(pos);
    }
    this.tokens.push({ kind: "end", pos: this.text.length });
    return this.tokens;
  }

  private number(pos: number): void {
    if (this.peek() === "0" && this.peek(1) === "x") {
      this.next();
      this.next();
      const hex = this.readWhile((c) => /^[0-9a-fA-F]$/.test(c), false);
      if (hex === "") this.fail(`unable to parse hex value '0x'`, pos);
      this.tokens.push({ kind: "value", value: Number.parseInt(hex, 16), pos, text: this.text.slice(pos, this.i) });
      return;
    }
    const text = this.readWhile(isNumberChar, false);
    if (!/^(?:[0-9]+\.?[0-9]*|\.[0-9]+)$/.test(text)) this.fail(`unable to parse numeric value '${text}'`, pos);
    this.tokens.push({ kind: "value", value: Number(text), pos, text });
  }

  private word(pos: number): void {
    const word = this.readWhile(isWordChar, true);
    if (word === "true" || word === "false") {
      this.tokens.push({ kind: "value", value: word === "true", pos, text: word });
    } else if (word === "in" || word === "IN") {
      this.fail(`operator 'in' is not supported`, pos);
    } else if (word.includes(".")) {
      this.fail(`bare word '${word}' contains '.', which Argo's evaluator reads as a field access; quote the value`, pos);
    } else if (this.peek() === "(") {
      this.fail(`function calls such as '${word}(...)' are not supported`, pos);
    } else {
      this.tokens.push({ kind: "value", value: word, pos, text: word });
    }
  }

  private quoted(pos: number): void {
    const quote = this.next();
    const value = this.readWhile((c) => c !== quote, true);
    if (this.next() !== quote) this.fail("unclosed string literal", pos);
    this.tokens.push({ kind: "value", value, pos, text: this.text.slice(pos, this.i) });
  }

  private bracketed(pos: number): void {
    this.next();
    const value = this.readWhile((c) => c !== "]", true);
    if (this.next() !== "]") this.fail("unclosed parameter bracket", pos);
    this.tokens.push({ kind: "value", value, pos, text: this.text.slice(pos, this.i) });
  }

  private operator(pos: number): void {
    const op = this.readWhile(isSymbolChar, false) || this.next();
    if (SUPPORTED_OPERATORS.has(op)) this.tokens.push({ kind: "op", op, pos });
    else if (UNSUPPORTED_OPERATORS.has(op)) this.fail(`operator '${op}' is not supported`, pos);
    else this.fail(`invalid token '${op}' (hint: put spaces between operators, and quote values that hold symbols)`, pos);
  }
}

// Deeper nesting than this is surely not a real condition; refuse it rather than overflow the stack.
const MAX_NESTING = 256;
const MAX_TOKENS = 4096;

class Parser {
  private i = 0;
  private depth = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  private peek(): Token {
    return this.tokens[this.i];
  }

  private isOp(token: Token, ops: ReadonlySet<string>): token is Token & { kind: "op" } {
    return token.kind === "op" && ops.has(token.op);
  }

  private unexpected(token: Token): never {
    let what: string;
    if (token.kind === "end") what = "unexpected end of expression";
    else if (token.kind === "value") what = `unexpected value '${token.text}' (hint: values need an operator between them; quote values that contain spaces)`;
    else if (token.kind === "op") what = `unexpected '${token.op}'`;
    else what = `unexpected '${token.kind === "lparen" ? "(" : ")"}'`;
    throw new WhenExpressionError("syntax", this.text, what, token.pos);
  }

  parse(): Node {
    const node = this.binary(0);
    if (this.peek().kind !== "end") this.unexpected(this.peek());
    return node;
  }

  // Binary levels, loosest first.
  private static readonly LEVELS: ReadonlyArray<ReadonlySet<string>> = [new Set(["||"]), new Set(["&&"]), COMPARATORS, new Set(["+", "-"]), new Set(["*", "/", "%"])];

  private binary(level: number): Node {
    if (level === Parser.LEVELS.length) return this.unary();
    let left = this.binary(level + 1);
    for (let token = this.peek(); this.isOp(token, Parser.LEVELS[level]); token = this.peek()) {
      this.i++;
      const right = this.binary(level + 1);
      left = { type: "binary", op: token.op, left, right, pos: token.pos };
    }
    return left;
  }

  private unary(): Node {
    const token = this.peek();
    if (++this.depth > MAX_NESTING) throw new WhenExpressionError("syntax", this.text, `nesting deeper than ${MAX_NESTING} levels`, token.pos);
    try {
      if (this.isOp(token, PREFIXES)) {
        this.i++;
        return { type: "unary", op: token.op, operand: this.unary(), pos: token.pos };
      }
      return this.primary();
    } finally {
      this.depth--;
    }
  }

  private primary(): Node {
    const token = this.peek();
    if (token.kind === "value") {
      this.i++;
      return { type: "literal", value: token.value, pos: token.pos };
    }
    if (token.kind === "lparen") {
      this.i++;
      const inner = this.binary(0);
      const close = this.peek();
      if (close.kind !== "rparen") {
        if (close.kind === "end") throw new WhenExpressionError("syntax", this.text, "unbalanced parenthesis", token.pos);
        this.unexpected(close);
      }
      this.i++;
      return inner;
    }
    return this.unexpected(token);
  }
}

function describe(value: Value): string {
  if (typeof value === "string") return `string ${JSON.stringify(value)}`;
  if (typeof value === "number") return `number ${String(value)}`;
  return `boolean ${String(value)}`;
}

/** A float64 as Go's %v writes it: shortest digits, exponent form below 1e-4 and from 1e6 (`1e+06`). */
function goFloat(n: number): string {
  if (!Number.isFinite(n)) return Number.isNaN(n) ? "NaN" : n > 0 ? "+Inf" : "-Inf";
  if (n === 0) return Object.is(n, -0) ? "-0" : "0";
  const [mantissa, exponentText] = n.toExponential().split("e");
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) return `${mantissa}e${exponent < 0 ? "-" : "+"}${String(Math.abs(exponent)).padStart(2, "0")}`;
  return String(n);
}

/** Compiles the right side of `=~`: Go RE2 syntax, mostly shared with JavaScript's. */
function compileRegex(pattern: string, fail: (detail: string) => never): RegExp {
  let source = pattern;
  let flags = "";
  // Go allows flag groups such as (?i) or (?is) at the start; JavaScript wants them as flags.
  for (let m = /^\(\?([imsU]+)\)/.exec(source); m; m = /^\(\?([imsU]+)\)/.exec(source)) {
    if (m[1].includes("U")) fail(`regular expression flag U is not supported in '${pattern}'`);
    for (const f of m[1]) if (!flags.includes(f)) flags += f;
    source = source.slice(m[0].length);
  }
  source = source.replace(/\(\?P</g, "(?<"); // Go's named groups (?P<name>...)
  try {
    return new RegExp(source, flags);
  } catch (err) {
    return fail(`invalid regular expression '${pattern}': ${(err as Error).message}`);
  }
}

class Evaluator {
  constructor(private readonly text: string) {}

  private fail(detail: string, pos: number): never {
    throw new WhenExpressionError("evaluation", this.text, detail, pos);
  }

  evaluate(node: Node): Value {
    switch (node.type) {
      case "literal":
        return node.value;
      case "unary": {
        const operand = this.evaluate(node.operand);
        if (node.op === "!") {
          if (typeof operand !== "boolean") this.fail(`'!' needs a boolean, got ${describe(operand)}`, node.pos);
          return !operand;
        }
        if (typeof operand !== "number") this.fail(`'-' needs a number, got ${describe(operand)}`, node.pos);
        return -operand;
      }
      case "binary":
        return this.binary(node);
    }
  }

  private binary(node: Node & { type: "binary" }): Value {
    const { op, pos } = node;
    const left = this.evaluate(node.left);
    if (op === "&&" || op === "||") {
      if (op === "&&" && left === false) return false;
      if (op === "||" && left === true) return true;
      if (typeof left !== "boolean") this.fail(`'${op}' needs booleans, got ${describe(left)}`, pos);
      const right = this.evaluate(node.right);
      if (typeof right !== "boolean") this.fail(`'${op}' needs booleans, got ${describe(right)}`, pos);
      return right;
    }
    const right = this.evaluate(node.right);
    switch (op) {
      case "==":
        return left === right;
      case "!=":
        return left !== right;
      case "<":
      case "<=":
      case ">":
      case ">=": {
        let order: number;
        if (typeof left === "number" && typeof right === "number") order = left < right ? -1 : left > right ? 1 : left === right ? 0 : NaN;
        else if (typeof left === "string" && typeof right === "string") order = compareCodePoints(left, right);
        else return this.fail(`'${op}' compares two numbers or two strings, got ${describe(left)} and ${describe(right)}`, pos);
        if (op === "<") return order < 0;
        if (op === "<=") return order <= 0;
        if (op === ">") return order > 0;
        return order >= 0;
      }
      case "=~":
      case "!~": {
        if (typeof left !== "string") this.fail(`'${op}' needs a string on its left, got ${describe(left)}`, pos);
        if (typeof right !== "string") this.fail(`'${op}' needs a regular expression (a string) on its right, got ${describe(right)}`, pos);
        const matched = compileRegex(right, (detail) => this.fail(detail, pos)).test(left);
        return op === "=~" ? matched : !matched;
      }
      case "+":
        if (typeof left === "number" && typeof right === "number") return left + right;
        if (typeof left === "string" || typeof right === "string") return this.concatPart(left) + this.concatPart(right);
        return this.fail(`'+' adds numbers or joins strings, got ${describe(left)} and ${describe(right)}`, pos);
      default: {
        if (typeof left !== "number" || typeof right !== "number") {
          this.fail(`'${op}' needs numbers, got ${describe(typeof left !== "number" ? left : right)}`, pos);
        }
        if (op === "-") return left - right;
        if (op === "*") return left * right;
        if (op === "/") return left / right;
        return left % right;
      }
    }
  }

  private concatPart(value: Value): string {
    return typeof value === "number" ? goFloat(value) : String(value);
  }
}

/**
 * Evaluates a substituted `when` expression: true if the task or step should run. Throws a
 * WhenExpressionError (a WorkflowError) if the text does not parse, an operator gets values of
 * the wrong type, or the result is not a boolean.
 */
export function evaluateWhen(expression: string): boolean {
  if (expression === "") return true;
  const tokens = new Tokenizer(expression).run();
  if (tokens.length === 1) throw new WhenExpressionError("syntax", expression, "the expression is empty");
  if (tokens.length > MAX_TOKENS) throw new WhenExpressionError("syntax", expression, `more than ${MAX_TOKENS} tokens`);
  const tree = new Parser(expression, tokens).parse();
  const result = new Evaluator(expression).evaluate(tree);
  if (typeof result !== "boolean") throw new WhenExpressionError("evaluation", expression, `the result is ${describe(result)}, not a boolean`);
  return result;
}
