// Run metrics: validated, stored once per (run, node, name); the first report wins. Shared by
// ReportRunMetrics and the engine's mlpipeline-metrics outputs.
import { ReportRunMetricsResponse_ReportRunMetricResult_Status as MetricStatus } from "../../../gen/proto/kfp/run_pb.js";
import type { RunStore } from "../../store/pipelines/run-store.js";

export interface MetricReport {
  name: string;
  nodeId: string;
  numberValue: number;
  format: number;
}

export interface MetricOutcome {
  status: MetricStatus;
  message?: string;
}

// Metric names as the API documents them: 1 to 63 characters.
const metricNamePattern = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const maxNodeIdLength = 128;

function metricProblem(metric: MetricReport): string | undefined {
  if (!metricNamePattern.test(metric.name)) {
    return `metric.name "${metric.name}" must be 1 to 63 characters matching [a-z]([-a-z0-9]*[a-z0-9])?`;
  }
  if (metric.nodeId === "" || metric.nodeId.length > maxNodeIdLength) {
    return `metric.node_id must be 1 to ${maxNodeIdLength} characters`;
  }
  return undefined;
}

export async function recordMetric(store: RunStore, runId: string, metric: MetricReport): Promise<MetricOutcome> {
  const problem = metricProblem(metric);
  if (problem) return { status: MetricStatus.INVALID_ARGUMENT, message: problem };
  try {
    const outcome = await store.insertMetric({ runId, ...metric });
    return outcome === "ok"
      ? { status: MetricStatus.OK }
      : { status: MetricStatus.DUPLICATE_REPORTING, message: `same metric has been reported before: ${metric.nodeId}/${metric.name}` };
  } catch {
    return { status: MetricStatus.INTERNAL_ERROR, message: "failed to store the metric" };
  }
}
