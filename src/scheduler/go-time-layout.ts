// Go's reference-time layouts (`2006-01-02T15:04:05Z07:00`), formatting in UTC only, as KFP's
// `[[ScheduledTime.<layout>]]` parameter macros use them. Tokens follow Go's time/format.go;
// anything that is not a token is copied as it is.

const longMonths = [
  "January", "February", "March", "April", "May", "June",
  "July", "August", "September", "October", "November", "December",
];
const longDays = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

type Parts = {
  year: number;
  month: number; // 1..12
  day: number;
  yearDay: number; // 1..366
  weekDay: number; // 0 = Sunday
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
};

function partsOf(ms: number): Parts {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  return {
    year,
    month: date.getUTCMonth() + 1,
    day: date.getUTCDate(),
    yearDay: Math.floor((Date.UTC(year, date.getUTCMonth(), date.getUTCDate()) - Date.UTC(year, 0, 1)) / 86_400_000) + 1,
    weekDay: date.getUTCDay(),
    hour: date.getUTCHours(),
    minute: date.getUTCMinutes(),
    second: date.getUTCSeconds(),
    millisecond: date.getUTCMilliseconds(),
  };
}

const pad = (n: number, width: number, fill = "0") => String(n).padStart(width, fill);
const hour12 = (hour: number) => (hour % 12 === 0 ? 12 : hour % 12);

type Formatter = (p: Parts) => string;

// Tokens in the order Go's scanner tries them at a given first character: longer forms first.
const tokens: [string, Formatter][] = [
  ["January", (p) => longMonths[p.month - 1]],
  ["Jan", (p) => longMonths[p.month - 1].slice(0, 3)],
  ["Monday", (p) => longDays[p.weekDay]],
  ["Mon", (p) => longDays[p.weekDay].slice(0, 3)],
  ["MST", () => "UTC"],
  ["002", (p) => pad(p.yearDay, 3)],
  ["01", (p) => pad(p.month, 2)],
  ["02", (p) => pad(p.day, 2)],
  ["03", (p) => pad(hour12(p.hour), 2)],
  ["04", (p) => pad(p.minute, 2)],
  ["05", (p) => pad(p.second, 2)],
  ["06", (p) => pad(p.year % 100, 2)],
  ["15", (p) => pad(p.hour, 2)],
  ["1", (p) => String(p.month)],
  ["2006", (p) => pad(p.year, 4)],
  ["2", (p) => String(p.day)],
  ["__2", (p) => pad(p.yearDay, 3, " ")],
  ["_2", (p) => pad(p.day, 2, " ")],
  ["3", (p) => String(hour12(p.hour))],
  ["4", (p) => String(p.minute)],
  ["5", (p) => String(p.second)],
  ["PM", (p) => (p.hour >= 12 ? "PM" : "AM")],
  ["pm", (p) => (p.hour >= 12 ? "pm" : "am")],
  // UTC offsets: the Z forms print Z for UTC, the numeric forms a zero offset.
  ["-07:00:00", () => "+00:00:00"],
  ["-070000", () => "+000000"],
  ["-07:00", () => "+00:00"],
  ["-0700", () => "+0000"],
  ["-07", () => "+00"],
  ["Z07:00:00", () => "Z"],
  ["Z070000", () => "Z"],
  ["Z07:00", () => "Z"],
  ["Z0700", () => "Z"],
  ["Z07", () => "Z"],
];

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";

/** `.000`/`,000` (fixed digits) or `.999`/`,999` (trailing zeros dropped) at `i`, if one is there. */
function fraction(layout: string, i: number): { length: number; format: Formatter } | undefined {
  const separator = layout[i];
  const digit = layout[i + 1];
  if ((separator !== "." && separator !== ",") || (digit !== "0" && digit !== "9")) return undefined;
  let j = i + 1;
  while (layout[j] === digit) j++;
  // Go takes the run as a fraction only when no other digit follows it.
  if (isDigit(layout[j])) return undefined;
  const digits = j - i - 1;
  return {
    length: j - i,
    format: (p) => {
      const text = pad(p.millisecond, 3).padEnd(digits, "0").slice(0, digits);
      if (digit === "0") return separator + text;
      const trimmed = text.replace(/0+$/, "");
      return trimmed === "" ? "" : separator + trimmed;
    },
  };
}

/** Formats `ms` (UTC) with a Go layout such as `2006-01-02` or `20060102150405`. */
export function formatGoTime(ms: number, layout: string): string {
  const parts = partsOf(ms);
  let out = "";
  let i = 0;
  while (i < layout.length) {
    // `_2006` is an underscore followed by the year, not `_2` followed by "006".
    if (layout.startsWith("_2006", i)) {
      out += "_" + pad(parts.year, 4);
      i += 5;
      continue;
    }
    const frac = fraction(layout, i);
    if (frac) {
      out += frac.format(parts);
      i += frac.length;
      continue;
    }
    const token = tokens.find(([text]) => layout.startsWith(text, i));
    if (token) {
      out += token[1](parts);
      i += token[0].length;
      continue;
    }
    out += layout[i];
    i++;
  }
  return out;
}
