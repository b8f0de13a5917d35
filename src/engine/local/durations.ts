// Timeouts as Argo templates give them: activeDeadlineSeconds (a number) or timeout ("90s", "1h").
import { WorkflowError } from "./workflow-error.js";

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or undefined when neither field is set. */
export function templateTimeoutMs(template: { activeDeadlineSeconds?: number | string; timeout?: string }): number | undefined {
  if (template.activeDeadlineSeconds !== undefined) return secondsToMs(template.activeDeadlineSeconds, "activeDeadlineSeconds");
  if (template.timeout === undefined) return undefined;
  const text = String(template.timeout).trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) throw new WorkflowError(`timeout "${text}" is not a duration such as 90s or 1h30m`);
  let ms = 0;
  for (const [, amount, , unit] of text.matchAll(/(\d+(\.\d+)?)(ms|s|m|h)/g)) ms += Number(amount) * units[unit];
  return ms;
}

export function secondsToMs(value: number | string, field: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds < 0) throw new WorkflowError(`${field} must be a number of seconds, got "${value}"`);
  return seconds * 1000;
}
