// Closed-loop load generators: autocannon for HTTP, a grpc-js client loop for gRPC.
import * as grpc from "@grpc/grpc-js";
import autocannon from "autocannon";

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  errors: number;
}

export async function httpLoad(
  url: string,
  seconds: number,
  request: { method?: "GET" | "POST"; body?: string; headers?: Record<string, string> } = {},
): Promise<LoadResult> {
  const result = await autocannon({ url, duration: seconds, connections: 10, pipelining: 1, ...request });
  return { requestsPerSecond: result.requests.average, p50Ms: result.latency.p50, errors: result.errors + result.non2xx };
}

export async function grpcLoad(address: string, path: string, request: Buffer, seconds: number): Promise<LoadResult> {
  const identity = (b: Buffer) => b;
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const deadline = Date.now() + seconds * 1000;
  const latencies: number[] = [];
  let errors = 0;
  const call = () =>
    new Promise<void>((resolve) => {
      const start = performance.now();
      client.makeUnaryRequest(path, identity, identity, request, (err) => {
        if (err) errors++;
        else latencies.push(performance.now() - start);
        resolve();
      });
    });
  // 10 connections' worth of concurrent streams on one HTTP/2 connection, like autocannon's 10.
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (Date.now() < deadline) await call();
    }),
  );
  client.close();
  latencies.sort((a, b) => a - b);
  return { requestsPerSecond: latencies.length / seconds, p50Ms: latencies[Math.floor(latencies.length / 2)] ?? 0, errors };
}
