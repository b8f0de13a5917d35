// Cron expressions in the forms KFP jobs use, evaluated in UTC.
import { ConnectError, Code } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { parseCron } from "../../src/scheduler/cron.js";

const at = (iso: string) => Date.parse(iso);
const next = (expression: string, after: string) => new Date(parseCron(expression).nextAfter(at(after))!).toISOString();

describe("parseCron", () => {
  it.each([
    ["6 fields are seconds-first", "0 30 14 * * ?", "2026-01-01T00:00:00Z", "2026-01-01T14:30:00.000Z"],
    ["6 fields every 3 seconds", "*/3 * * * * *", "2026-01-01T00:00:01Z", "2026-01-01T00:00:03.000Z"],
    ["5 fields are minute-first", "*/5 * * * *", "2026-01-01T00:01:00Z", "2026-01-01T00:05:00.000Z"],
    ["5 fields with a weekday", "0 9 * * 1", "2026-01-01T00:00:00Z", "2026-01-05T09:00:00.000Z"],
    ["@hourly", "@hourly", "2026-01-01T00:10:00Z", "2026-01-01T01:00:00.000Z"],
    ["@daily", "@daily", "2026-01-01T00:10:00Z", "2026-01-02T00:00:00.000Z"],
    ["@every with hours and minutes", "@every 1h30m", "2026-01-01T00:00:00Z", "2026-01-01T01:30:00.000Z"],
    ["@every with seconds", "@every 90s", "2026-01-01T00:00:00Z", "2026-01-01T00:01:30.000Z"],
  ])("%s: %s", (_what, expression, after, expected) => {
    expect(next(expression, after)).toBe(expected);
  });

  it("fires strictly after the given time", () => {
    expect(next("0 0 * * * *", "2026-01-01T01:00:00Z")).toBe("2026-01-01T02:00:00.000Z");
  });

  it.each(["", "every tuesday", "61 * * * *", "* * *", "@every", "@every 10", "@every 500ms", "@sometimes"])(
    "refuses %j with InvalidArgument",
    (expression) => {
      let error: unknown;
      try {
        parseCron(expression);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.InvalidArgument);
    },
  );
});
