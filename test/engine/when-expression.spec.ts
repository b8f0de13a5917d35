import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { referencedVariables, substitute } from "../../src/engine/local/template-vars.js";
import { compareCodePoints, evaluateWhen, WhenExpressionError } from "../../src/engine/local/when-expression.js";
import { WorkflowError } from "../../src/engine/local/workflow-error.js";
import { thrownBy as thrown } from "../helpers/thrown.js";

const workflowsDir = new URL("../../../shared/testdata/workflows/", import.meta.url).pathname;


describe("evaluateWhen: results", () => {
  it.each([
    // What KFP compiles dsl.Condition(a == b) to, after substitution: both sides quoted.
    ['"heads" == "heads"', true],
    ['"tails" == "heads"', false],
    ['"heads" != "heads"', false],
    ['"tails" != "heads"', true],
    ['"" == ""', true],
    ['"" == "heads"', false],
    ['"Heads" == "heads"', false],
    ['"a b c" == "a b c"', true],
    ['"it\'s" == "it\'s"', true],
    ["'single' == 'single'", true],
    ["'mixed' == \"mixed\"", true],
    ['"a\\"b" == \'a"b\'', true],
    ['"tab\\there" == "tabthere"', true],
    ['"10" == "10.0"', false],
    // Numeric conditions: KFP leaves both sides unquoted for < <= > >=.
    ["10 > 5", true],
    ["3 > 5", false],
    ["5 >= 5", true],
    ["5 <= 4.999", false],
    ["-1 < 0", true],
    ["-2.5 < -2", true],
    ["0.1 < .2", true],
    ["1. == 1", true],
    ["5 == 5.0", true],
    ["10 != 10", false],
    ["0x10 == 16", true],
    ["0xff > 254", true],
    ["007 == 7", true],
    ["12345678901234567890 > 1", true],
    // Strings compare by code point (Go's byte order), so numbers in quotes compare as text.
    ['"10" > "5"', false],
    ['"b" > "a"', true],
    ['"a" < "ab"', true],
    ['"Z" < "a"', true],
    ['"é" > "z"', true],
    ['"\uffff" < "😀"', true],
    ['"abc" <= "abc"', true],
    ['"abc" >= "abd"', false],
    // Mixed types are never equal, and that is not an error.
    ['5 == "5"', false],
    ['5 != "5"', true],
    ['true == "true"', false],
    ["true == 1", false],
    // Bare words are strings (Argo turns govaluate's variables into strings).
    ["heads == heads", true],
    ["heads == tails", false],
    ["heads != tails", true],
    ['heads == "heads"', true],
    ["Succeeded == Succeeded", true],
    ["snake_case_1 == snake_case_1", true],
    ["b > a", true],
    ["[hello world] == \"hello world\"", true],
    ["[a.b] == 'a.b'", true],
    ["héllo == héllo", true],
    // Booleans.
    ["true", true],
    ["false", false],
    ["true == true", true],
    ["true != false", true],
    ["!false", true],
    ["!true", false],
    ["! true", false],
    ["!(1 > 2)", true],
    ["!true == false", true],
    ["! !true", true],
    // && and || with the usual precedence; parentheses.
    ["true && true", true],
    ["true && false", false],
    ["false || true", true],
    ["false || false", false],
    ["true || false && false", true],
    ["(true || false) && false", false],
    ["false && true || true", true],
    ["1 < 2 && 3 > 2", true],
    ['"heads" == "heads" && "tails" == "tails"', true],
    ['"heads" == "tails" || "tails" == "tails"', true],
    ["( heads == heads && tails == tails ) || ( tails == tails && heads == tails )", true],
    ["((((true))))", true],
    // Short-circuit: the right side is not evaluated, so its type does not matter.
    ['false && "x" > 1', false],
    ['true || "x" > 1', true],
    // Arithmetic, as govaluate allows it.
    ["1 + 2 == 3", true],
    ["2 * 3 + 1 == 7", true],
    ["2 * (3 + 1) == 8", true],
    ["10 - 2 - 3 == 5", true],
    ["12 / 2 / 3 == 2", true],
    ["7 % 4 == 3", true],
    ["-3 + 5 == 2", true],
    ["1 + 1 > 1", true],
    ['"a" + "b" == "ab"', true],
    ['"n" + 5 == "n5"', true],
    ['"n" + 2.5 == "n2.5"', true],
    ['"n" + 1000000 == "n1e+06"', true],
    ['"n" + 123456 == "n123456"', true],
    ['"n" + 0.00001 == "n1e-05"', true],
    ['a+b == "ab"', true],
    // Regular expressions: unanchored, Go flag groups honoured.
    ['"heads" =~ "^h"', true],
    ['"tails" =~ "^h"', false],
    ['"tails" !~ "^h"', true],
    ["heads =~ ead", true],
    ['"HEADS" =~ "(?i)heads"', true],
    ['"v1.2.3" =~ "^v[0-9]+\\\\.[0-9]+"', true],
    ['"ab" =~ "(?P<first>a)b"', true],
    // Whitespace is free.
    ['  "a"=="a"  ', true],
    ["\n1\t<\n2\n", true],
  ])("%s → %s", (expression, expected) => {
    expect(evaluateWhen(expression)).toBe(expected);
  });

  it("is true for the empty string, as Argo runs a task whose when is empty", () => {
    expect(evaluateWhen("")).toBe(true);
  });
});

describe("evaluateWhen: errors", () => {
  it.each([
    // Syntax.
    ["   ", "the expression is empty", undefined],
    ["==", "unexpected '=='", 0],
    ['"heads" ==', "unexpected end of expression", 10],
    ['"heads" == "heads" &&', "unexpected end of expression", 21],
    ["(true", "unbalanced parenthesis", 0],
    ["true)", "unexpected ')'", 4],
    ["()", "unexpected ')'", 1],
    ["hello world == hello world", "unexpected value 'world'", 6],
    ['"a" "b"', "unexpected value '\"b\"'", 4],
    ["10abc == 10abc", "unexpected value 'abc'", 2],
    ["1e5 > 1", "unexpected value 'e5'", 1],
    ['"heads" = "heads"', "invalid token '='", 8],
    ['"heads" === "heads"', "invalid token '==='", 8],
    ["1 ==-1", "invalid token '==-'", 2],
    ["true &&& false", "invalid token '&&&'", 5],
    ["a @ b", "invalid token '@'", 2],
    ["a ] b", "invalid token ']'", 2],
    ["_x == _x", "invalid token '_'", 0],
    ['"unclosed == "x', "unexpected value 'x'", 14],
    ['"unclosed', "unclosed string literal", 0],
    ["'abc\" == 'abc\"", "unclosed string literal", 13],
    ["!!true", "invalid token '!!'", 0],
    ["[abc", "unclosed parameter bracket", 0],
    ["abc\\", "dangling backslash", 3],
    ["1.2.3 == 1", "unable to parse numeric value '1.2.3'", 0],
    [". == 1", "unable to parse numeric value '.'", 0],
    ["0x == 0", "unable to parse hex value '0x'", 0],
    ["v1.2 == v1.2", "bare word 'v1.2' contains '.'", 0],
    ["tasks.a.outputs == x", "bare word 'tasks.a.outputs' contains '.'", 0],
    ["x in y", "operator 'in' is not supported", 2],
    ["1 & 1", "operator '&' is not supported", 2],
    ["1 | 1", "operator '|' is not supported", 2],
    ["2 ** 3 == 8", "operator '**' is not supported", 2],
    ["1 << 2", "operator '<<' is not supported", 2],
    ["true ? 1 : 2", "operator '?' is not supported", 5],
    ["a ?? b", "operator '??' is not supported", 2],
    ["~1", "operator '~' is not supported", 0],
    ["1, 2", "operator ',' is not supported", 1],
    ["len(x) > 1", "function calls such as 'len(...)' are not supported", 0],
    ["1 +", "unexpected end of expression", 3],
  ])("%s: syntax error '%s'", (expression, detail, position) => {
    const err = thrown(() => evaluateWhen(expression));
    expect(err).toBeInstanceOf(WhenExpressionError);
    expect(err).toBeInstanceOf(WorkflowError);
    expect(err.message.startsWith(`invalid when expression '${expression}': `)).toBe(true);
    expect(err.message).toContain(detail);
    expect((err as WhenExpressionError).expression).toBe(expression);
    expect((err as WhenExpressionError).position).toBe(position);
    if (position !== undefined) expect(err.message).toContain(`(at position ${position})`);
  });

  it.each([
    // Not a boolean.
    ["heads", "the result is string \"heads\", not a boolean", undefined],
    ["5", "the result is number 5, not a boolean", undefined],
    ['"true"', 'the result is string "true", not a boolean', undefined],
    ["1 + 1", "the result is number 2, not a boolean", undefined],
    // Ordering needs two numbers or two strings.
    ['"10" > 5', "'>' compares two numbers or two strings, got string \"10\" and number 5", 5],
    ["abc > 5", "'>' compares two numbers or two strings, got string \"abc\" and number 5", 4],
    ["true < false", "'<' compares two numbers or two strings", 5],
    // Logic needs booleans.
    ['"x" && true', "'&&' needs booleans, got string \"x\"", 4],
    ["true && 1", "'&&' needs booleans, got number 1", 5],
    ["1 || true", "'||' needs booleans, got number 1", 2],
    ["false || x", "'||' needs booleans, got string \"x\"", 6],
    ["!heads", "'!' needs a boolean, got string \"heads\"", 0],
    ["!5 == 5", "'!' needs a boolean, got number 5", 0],
    ["-heads == 1", "'-' needs a number, got string \"heads\"", 0],
    // Arithmetic.
    ["heads-up == heads-up", "'-' needs numbers, got string \"heads\"", 5],
    ["true + 1 == 2", "'+' adds numbers or joins strings", 5],
    ['2 * "x" == 1', "'*' needs numbers, got string \"x\"", 2],
    // Regular expressions.
    ['5 =~ "5"', "'=~' needs a string on its left, got number 5", 2],
    ['"5" =~ 5', "'=~' needs a regular expression (a string) on its right, got number 5", 4],
    ['"x" =~ "("', "invalid regular expression '('", 4],
    ['"x" =~ "(?U)x"', "regular expression flag U is not supported", 4],
  ])("%s: evaluation error '%s'", (expression, detail, position) => {
    const err = thrown(() => evaluateWhen(expression));
    expect(err).toBeInstanceOf(WhenExpressionError);
    expect(err.message.startsWith(`cannot evaluate when expression '${expression}': `)).toBe(true);
    expect(err.message).toContain(detail);
    expect((err as WhenExpressionError).position).toBe(position);
  });

  it("refuses absurd nesting and length instead of overflowing the stack", () => {
    expect(() => evaluateWhen(`${"(".repeat(1000)}true${")".repeat(1000)}`)).toThrow(/nesting deeper than/);
    expect(() => evaluateWhen("! ".repeat(300) + "true")).toThrow(/nesting deeper than/);
    expect(() => evaluateWhen(Array(3000).fill("true").join(" && "))).toThrow(/more than 4096 tokens/);
    expect(evaluateWhen(Array(1000).fill("true").join(" && "))).toBe(true);
  });

  it("shortens a long expression in its message", () => {
    const err = thrown(() => evaluateWhen(`${"x".repeat(400)} ==`));
    expect(err.message).toContain(`'${"x".repeat(300)}…'`);
  });
});

describe("compareCodePoints", () => {
  it.each([
    ["a", "b", -1],
    ["b", "a", 1],
    ["a", "a", 0],
    ["", "", 0],
    ["", "a", -1],
    ["ab", "a", 1],
    ["a-b:2", "a:1", -1],
    ["\uffff", "😀", -1],
    ["😀", "😁", -1],
  ])("%s vs %s", (a, b, expected) => {
    expect(Math.sign(compareCodePoints(a, b))).toBe(expected);
  });
});

// Every `when` in the sample workflows, with the values their tasks can produce.
describe("the when expressions of shared/testdata/workflows", () => {
  const whens: { file: string; when: string }[] = [];
  const collect = (node: unknown, file: string): void => {
    if (Array.isArray(node)) node.forEach((child) => collect(child, file));
    else if (node && typeof node === "object") {
      for (const [key, value] of Object.entries(node)) {
        if (key === "when" && typeof value === "string") whens.push({ file, when: value });
        else collect(value, file);
      }
    }
  };
  for (const file of readdirSync(workflowsDir).filter((name) => name.endsWith(".yaml")).sort()) {
    for (const doc of parseAllDocuments(readFileSync(workflowsDir + file, "utf8"))) collect(doc.toJS(), file);
  }

  it("finds them", () => {
    expect(whens).toEqual(
      expect.arrayContaining([
        { file: "coin.yaml", when: '"{{tasks.flip-again.outputs.parameters.flip-again-output}}" == "tails"' },
        { file: "coin.yaml", when: '"{{tasks.flip.outputs.parameters.flip-output}}" == "heads"' },
        { file: "coin.yaml", when: '"{{tasks.flip.outputs.parameters.flip-output}}" == "tails"' },
        { file: "recursive_while.yaml", when: '"{{inputs.parameters.flip-output}}" == "heads"' },
      ]),
    );
  });

  const cases = whens.flatMap(({ file, when }) =>
    ["heads", "tails", "", "heads tails", 'say "hi"', "it's"].map((value) => ({ file, when, value })),
  );
  it.each(cases)("$file: $when with $value", ({ when, value }) => {
    // Each is `"{{variable}}" == "literal"`, as KFP compiles dsl.Condition(x == literal).
    const [variable] = referencedVariables(when);
    const literal = /== "([^"]*)"$/.exec(when)![1];
    const substituted = substitute(when, (name) => (name === variable ? value : undefined));
    if (value.includes('"')) {
      // A double quote in the value ends the string early, as it did in Argo.
      expect(() => evaluateWhen(substituted)).toThrow(WhenExpressionError);
    } else {
      expect(evaluateWhen(substituted)).toBe(value === literal);
    }
  });
});

// The shapes KFP v1 compiles dsl.Condition to: == and != quote both sides; other comparisons don't.
describe("KFP-compiled conditions", () => {
  it.each([
    ['"{{x}}" == "heads"', "heads", true],
    ['"{{x}}" != "heads"', "heads", false],
    ['"{{x}}" == "5"', "5", true],
    ['"{{x}}" == "5"', "5.0", false],
    ["{{x}} > 5", "10", true],
    ["{{x}} > 5", "3", false],
    ["{{x}} >= 5", "5", true],
    ["{{x}} < 0.5", "0.25", true],
    ["{{x}} <= 12", "-3", true],
    ["{{x}} > {{y}}", "10", false],
  ])("%s with x=%s", (when, value, expected) => {
    const substituted = substitute(when, (name) => (name === "x" ? value : name === "y" ? "12" : undefined));
    expect(evaluateWhen(substituted)).toBe(expected);
  });

  it.each([
    ["{{x}} > 5", "abc", "'>' compares two numbers or two strings"],
    ["{{x}} > 5", "", "unexpected '>'"],
    ["{{x}} > 5", "1e3", "unexpected value 'e3'"],
  ])("%s with x=%s fails", (when, value, detail) => {
    expect(() => evaluateWhen(substitute(when, () => value))).toThrow(detail);
  });
});
