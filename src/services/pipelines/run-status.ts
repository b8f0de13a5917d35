// Run status strings (the Argo workflow phases, plus Terminating while a stop is under way).
export const RunStatus = {
  pending: "Pending",
  running: "Running",
  succeeded: "Succeeded",
  failed: "Failed",
  error: "Error",
  terminating: "Terminating",
} as const;

/** The statuses a run can still be terminated from. */
export const terminableStatuses: readonly string[] = [RunStatus.pending, RunStatus.running, ""];

export const isFinished = (status: string): boolean =>
  status === RunStatus.succeeded || status === RunStatus.failed || status === RunStatus.error || status === "Skipped";
