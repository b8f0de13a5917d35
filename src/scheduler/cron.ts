// Cron expressions as KFP jobs use them: 6 fields are seconds-first (`0 30 14 * * ?`), 5 fields
// are standard Unix cron (minute first), descriptors (`@hourly`, `@daily`, …) and Go-style
// `@every 1h30m`. Always UTC.
import { Cron } from "croner";
import { invalidArgument } from "../errors.js";

export interface CronSchedule {
  /** The first fire time strictly after `afterMs`, or undefined when there is none. */
  nextAfter(afterMs: number): number | undefined;
}

const durationUnits: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };

/** A Go duration (`1h30m`, `90s`, `1.5h`) in milliseconds, or undefined when malformed. */
function parseGoDuration(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(text)) return undefined;
  let ms = 0;
  for (const [, amount, , unit] of text.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(amount) * durationUnits[unit];
  return ms;
}

export function parseCron(expression: string): CronSchedule {
  const text = expression.trim();
  const every = /^@every\s+(\S+)$/.exec(text);
  if (every) {
    const ms = parseGoDuration(every[1]);
    if (ms === undefined || ms < 1000) {
      throw invalidArgument(`cron "${expression}": @every needs a duration of at least 1s, such as 90s or 1h30m`);
    }
    return { nextAfter: (afterMs) => afterMs + ms };
  }
  let cron: Cron;
  try {
    cron = new Cron(text, { timezone: "UTC", paused: true });
  } catch (err) {
    throw invalidArgument(
      `cron "${expression}" is not a supported format (${(err as Error).message}); use 6 fields with seconds first ` +
        `(0 30 14 * * ?), 5 standard fields, @hourly-style descriptors or @every <duration>`,
    );
  }
  return { nextAfter: (afterMs) => cron.nextRun(new Date(afterMs))?.getTime() };
}
