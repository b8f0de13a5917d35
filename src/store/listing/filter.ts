// api.Filter → conditions on a resource's columns, with KFP's rules for keys, ops and values.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { Predicate_Op, type Filter, type Predicate } from "../../../gen/proto/kfp/filter_pb.js";
import { invalidArgument } from "../../errors.js";
import type { Condition, SqlValue } from "./sql.js";
import type { ListField, ListSpec } from "./types.js";

// Guards against filters that would bind more parameters than the databases allow.
export const maxPredicates = 100;
export const maxFilterValues = 1000;

/** One value of a predicate, tagged with the oneof case it came from. */
type Scalar =
  | { kind: "int"; value: number }
  | { kind: "long"; value: bigint }
  | { kind: "string"; value: string }
  | { kind: "timestamp"; value: Timestamp };

/** A millisecond interval [lo, lo + unit): one instant at the value's precision. */
interface Instant {
  lo: bigint;
  unit: bigint;
}

type Comparison = Exclude<Predicate_Op, Predicate_Op.UNKNOWN | Predicate_Op.IN | Predicate_Op.IS_SUBSTRING>;

const comparisonSql: Record<Comparison, "=" | "<>" | ">" | ">=" | "<" | "<="> = {
  [Predicate_Op.EQUALS]: "=",
  [Predicate_Op.NOT_EQUALS]: "<>",
  [Predicate_Op.GREATER_THAN]: ">",
  [Predicate_Op.GREATER_THAN_EQUALS]: ">=",
  [Predicate_Op.LESS_THAN]: "<",
  [Predicate_Op.LESS_THAN_EQUALS]: "<=",
};

function isComparison(op: Predicate_Op): op is Comparison {
  return Object.hasOwn(comparisonSql, op);
}

function opName(op: Predicate_Op): string {
  return Predicate_Op[op] ?? String(op);
}

/** Resolves a filter key to its field: exact, else case-insensitively. */
export function filterField(spec: ListSpec, key: string): ListField {
  const name = Object.hasOwn(spec.fields, key) ? key : key.trim().toLowerCase();
  if (!Object.hasOwn(spec.fields, name)) {
    throw invalidArgument(`no support for filtering on unrecognized field "${key}"`);
  }
  return spec.fields[name]!;
}

/** The AND-ed conditions of a filter; InvalidArgument for anything a client got wrong. */
export function compileFilter(spec: ListSpec, filter: Filter): Condition[] {
  if (filter.predicates.length > maxPredicates) {
    throw invalidArgument(`a filter may have at most ${maxPredicates} predicates, got ${filter.predicates.length}`);
  }
  let values = 0;
  return filter.predicates.map((predicate) => {
    const field = filterField(spec, predicate.key);
    const scalars = predicateValues(predicate);
    values += scalars.length;
    if (values > maxFilterValues) throw invalidArgument(`a filter may have at most ${maxFilterValues} values`);
    return compilePredicate(predicate, field, scalars);
  });
}

/** Checks the op against the value's shape and returns the value(s). */
function predicateValues(p: Predicate): Scalar[] {
  const key = p.key;
  if (p.op === Predicate_Op.UNKNOWN || !(isComparison(p.op) || p.op === Predicate_Op.IN || p.op === Predicate_Op.IS_SUBSTRING)) {
    throw invalidArgument(`invalid predicate operation ${opName(p.op)} on key "${key}"`);
  }
  const v = p.value;
  if (v.case === undefined) throw invalidArgument(`no value set for predicate on key "${key}"`);
  const isList = v.case === "intValues" || v.case === "longValues" || v.case === "stringValues";
  if (p.op === Predicate_Op.IN && !isList) {
    throw invalidArgument(`cannot use IN operator with scalar type ${v.case} on key "${key}": use int_values, long_values or string_values`);
  }
  if (p.op !== Predicate_Op.IN && isList) {
    throw invalidArgument(`cannot use ${opName(p.op)} operator with array type ${v.case} on key "${key}"`);
  }
  if (p.op === Predicate_Op.IS_SUBSTRING && v.case !== "stringValue") {
    throw invalidArgument(`IS_SUBSTRING needs a string_value, got ${v.case} on key "${key}"`);
  }
  switch (v.case) {
    case "intValue":
      return [{ kind: "int", value: v.value }];
    case "longValue":
      return [{ kind: "long", value: v.value }];
    case "stringValue":
      return [{ kind: "string", value: v.value }];
    case "timestampValue":
      return [{ kind: "timestamp", value: v.value }];
    case "intValues":
      return v.value.values.map((value) => ({ kind: "int", value }));
    case "longValues":
      return v.value.values.map((value) => ({ kind: "long", value }));
    case "stringValues":
      return v.value.values.map((value) => ({ kind: "string", value }));
  }
}

function compilePredicate(p: Predicate, field: ListField, scalars: Scalar[]): Condition {
  const column = field.column;
  if (p.op === Predicate_Op.IS_SUBSTRING) {
    if (field.type !== "string") {
      throw invalidArgument(`IS_SUBSTRING only applies to text fields, not "${p.key}"`);
    }
    const needle = (scalars[0] as { value: string }).value;
    return nullAsEmpty(field, needle === "", { kind: "substring", column, needle });
  }
  switch (field.type) {
    case "string": {
      const values = scalars.map((s) => stringValue(p.key, s));
      if (p.op === Predicate_Op.IN) return nullAsEmpty(field, values.includes(""), { kind: "in", column, values });
      const op = p.op as Comparison;
      return nullAsEmpty(field, emptyStringSatisfies(op, values[0]!), { kind: "compare", column, op: comparisonSql[op], value: values[0]! });
    }
    case "millis": {
      const instants = scalars.map((s) => millisValue(p.key, s));
      if (p.op === Predicate_Op.IN) {
        if (instants.every((i) => i.unit === 1n)) return { kind: "in", column, values: instants.map((i) => i.lo) };
        return { kind: "or", conditions: instants.map((i) => instantCondition(column, Predicate_Op.EQUALS, i)) };
      }
      return instantCondition(column, p.op as Comparison, instants[0]!);
    }
    case "storageState":
    case "int": {
      const values = scalars.map((s) => (field.type === "int" ? intValue(p.key, s) : storageStateValue(p.key, s)));
      if (p.op === Predicate_Op.IN) return { kind: "in", column, values };
      return { kind: "compare", column, op: comparisonSql[p.op as Comparison], value: values[0]! };
    }
  }
}

/** A NULL in a nullable text column counts as "": it matches when "" would. */
function nullAsEmpty(field: ListField, emptyMatches: boolean, condition: Condition): Condition {
  if (!field.nullable || !emptyMatches) return condition; // NULL never satisfies a comparison
  return { kind: "or", conditions: [{ kind: "isNull", column: field.column }, condition] };
}

/** Whether "" op value holds; "" sorts first under every collation. */
function emptyStringSatisfies(op: Comparison, value: string): boolean {
  switch (op) {
    case Predicate_Op.EQUALS:
    case Predicate_Op.GREATER_THAN_EQUALS:
      return value === "";
    case Predicate_Op.NOT_EQUALS:
    case Predicate_Op.LESS_THAN:
      return value !== "";
    case Predicate_Op.GREATER_THAN:
      return false;
    case Predicate_Op.LESS_THAN_EQUALS:
      return true;
  }
}

/** A comparison of an integer millisecond column with an instant of some precision. */
function instantCondition(column: string, op: Comparison, { lo, unit }: Instant): Condition {
  const hi = lo + unit;
  const cmp = (o: "=" | "<>" | "<" | "<=" | ">" | ">=", value: SqlValue): Condition => ({ kind: "compare", column, op: o, value });
  switch (op) {
    case Predicate_Op.EQUALS:
      return unit === 1n ? cmp("=", lo) : { kind: "and", conditions: [cmp(">=", lo), cmp("<", hi)] };
    case Predicate_Op.NOT_EQUALS:
      return unit === 1n ? cmp("<>", lo) : { kind: "or", conditions: [cmp("<", lo), cmp(">=", hi)] };
    case Predicate_Op.GREATER_THAN:
      return cmp(">=", hi);
    case Predicate_Op.GREATER_THAN_EQUALS:
      return cmp(">=", lo);
    case Predicate_Op.LESS_THAN:
      return cmp("<", lo);
    case Predicate_Op.LESS_THAN_EQUALS:
      return cmp("<", hi);
  }
}

function stringValue(key: string, s: Scalar): string {
  switch (s.kind) {
    case "string":
      return s.value;
    case "int":
    case "long":
      return s.value.toString();
    case "timestamp":
      throw invalidArgument(`cannot compare text field "${key}" with a timestamp_value`);
  }
}

const secondsText = /^[+-]?\d{1,15}$/;

function millisValue(key: string, s: Scalar): Instant {
  switch (s.kind) {
    case "int":
      return { lo: BigInt(s.value) * 1000n, unit: 1000n };
    case "long":
      return { lo: s.value * 1000n, unit: 1000n };
    case "timestamp":
      return { lo: s.value.seconds * 1000n + BigInt(Math.floor(s.value.nanos / 1e6)), unit: 1n };
    case "string": {
      const text = s.value.trim();
      if (secondsText.test(text)) return { lo: BigInt(text) * 1000n, unit: 1000n };
      const millis = parseRfc3339Millis(text);
      if (millis === undefined) {
        throw invalidArgument(`invalid value "${s.value}" for "${key}": expected an RFC 3339 timestamp or epoch seconds`);
      }
      return { lo: millis, unit: 1n };
    }
  }
}

const rfc3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** RFC 3339 date-time → epoch milliseconds (sub-millisecond digits dropped), else undefined. */
export function parseRfc3339Millis(text: string): bigint | undefined {
  const m = rfc3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  date.setUTCFullYear(year); // Date.UTC maps years 0-99 to 1900-1999
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day || hour > 23 || minute > 59 || second > 59) {
    return undefined;
  }
  const fraction = BigInt((m[7] ?? "").padEnd(3, "0").slice(0, 3));
  const offsetMinutes = m[8] ? 0 : (m[9] === "-" ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11]));
  return BigInt(date.getTime()) + fraction - BigInt(offsetMinutes) * 60_000n;
}

const storageStates: Record<string, number> = {
  STORAGESTATE_AVAILABLE: 0,
  AVAILABLE: 0,
  STORAGESTATE_ARCHIVED: 1,
  ARCHIVED: 1,
  "0": 0,
  "1": 1,
};

function storageStateValue(key: string, s: Scalar): number {
  const text = s.kind === "timestamp" ? undefined : s.value.toString().trim().toUpperCase();
  const state = text === undefined || !Object.hasOwn(storageStates, text) ? undefined : storageStates[text];
  if (state === undefined) {
    const shown = s.kind === "timestamp" ? "a timestamp_value" : `"${s.value.toString()}"`;
    throw invalidArgument(`invalid value ${shown} for "${key}": expected STORAGESTATE_AVAILABLE or STORAGESTATE_ARCHIVED`);
  }
  return state;
}

const intText = /^[+-]?\d+$/;

function intValue(key: string, s: Scalar): number {
  const text = s.kind === "timestamp" ? "" : s.value.toString().trim();
  const n = intText.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(n)) {
    const shown = s.kind === "timestamp" ? "a timestamp_value" : `"${s.value.toString()}"`;
    throw invalidArgument(`invalid value ${shown} for "${key}": expected an integer`);
  }
  return n;
}
