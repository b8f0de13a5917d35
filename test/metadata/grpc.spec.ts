// Every metadata RPC over native gRPC, with a client @grpc/proto-loader builds from our .proto
// files (the way a client generated from the original files talks to us).
import * as grpc from "@grpc/grpc-js";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { databases, grpcCall, startTestServer, type TestServer } from "../helpers/server.js";

// google.rpc.Status { code = 1; message = 2; repeated Any details = 3 }: read the detail type URLs.
import { AnySchema } from "@bufbuild/protobuf/wkt";
import { BinaryReader } from "@bufbuild/protobuf/wire";

function statusDetailTypes(err: grpc.ServiceError): string[] {
  const [bin] = err.metadata.get("grpc-status-details-bin") as Buffer[];
  if (!bin) return [];
  const reader = new BinaryReader(bin);
  const types: string[] = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 3) types.push(fromBinary(AnySchema, reader.bytes()).typeUrl);
    else reader.skip(wireType);
  }
  return types;
}

async function expectGrpcError(promise: Promise<unknown>, code: grpc.status, message?: RegExp) {
  const err = (await promise.then(
    () => expect.fail("call succeeded"),
    (e: unknown) => e,
  )) as grpc.ServiceError;
  expect(err.code).toBe(code);
  if (message) expect(err.details).toMatch(message);
  expect(statusDetailTypes(err)).toEqual(["type.googleapis.com/api.Error"]);
}

describe.each(databases)("metadata over gRPC on %s", (database) => {
  let t: TestServer;
  let client: ReturnType<TestServer["grpc"]>;
  beforeAll(async () => {
    t = await startTestServer({ database });
    client = t.grpc();
  });
  afterAll(async () => {
    await t.close();
  });

  it("runs every RPC of the service", async () => {
    const types = await grpcCall(client, "ListArtifactTypes", {});
    expect(types.artifact_types.map((x: { name: string }) => x.name)).toContain("kubeflow.org/alpha/model");

    const created = await grpcCall(client, "CreateArtifactType", {
      artifact_type: { name: "grpc.test/dataset", properties: { rows: "INT" } },
    });
    expect(created.artifact_type).toMatchObject({ name: "grpc.test/dataset", properties: { rows: "INT" } });
    const updated = await grpcCall(client, "UpdateArtifactType", {
      artifact_type: { name: "grpc.test/dataset", properties: { rows: "INT", path: "STRING" } },
    });
    expect(updated.artifact_type.id).toBe(created.artifact_type.id);
    const got = await grpcCall(client, "GetArtifactType", { name: "artifact_types/grpc.test/dataset" });
    expect(got.artifact_type.properties).toEqual({ rows: "INT", path: "STRING" });

    const execType = await grpcCall(client, "CreateExecutionType", {
      execution_type: { name: "grpc.test/step", properties: { attempt: "INT" } },
    });
    await grpcCall(client, "UpdateExecutionType", {
      execution_type: { name: "grpc.test/step", properties: { attempt: "INT", host: "STRING" } },
    });
    expect((await grpcCall(client, "GetExecutionType", { name: "grpc.test/step" })).execution_type.id).toBe(
      execType.execution_type.id,
    );
    expect((await grpcCall(client, "ListExecutionTypes", {})).execution_types.length).toBeGreaterThanOrEqual(2);

    const artifact = await grpcCall(client, "CreateArtifact", {
      parent: "artifact_types/grpc.test/dataset",
      artifact: { uri: "s3://b/k", properties: { rows: { int_value: "12345678901234" } } },
    });
    expect(artifact.artifact).toMatchObject({ uri: "s3://b/k", properties: { rows: { int_value: "12345678901234" } } });
    const artifactName = `artifact_types/grpc.test/dataset/artifacts/${artifact.artifact.id}`;
    expect((await grpcCall(client, "GetArtifact", { name: artifactName })).artifact.id).toBe(artifact.artifact.id);
    expect((await grpcCall(client, "ListArtifacts", { name: "artifact_types/grpc.test/dataset" })).artifacts).toHaveLength(1);
    expect((await grpcCall(client, "ListArtifacts", {})).artifacts.length).toBeGreaterThanOrEqual(1);

    const execution = await grpcCall(client, "CreateExecution", {
      parent: "execution_types/grpc.test/step",
      execution: { last_known_state: "COMPLETE", properties: { attempt: { int_value: "1" } } },
    });
    expect(execution.execution.last_known_state).toBe("COMPLETE");
    const executionName = `execution_types/grpc.test/step/executions/${execution.execution.id}`;
    expect((await grpcCall(client, "GetExecution", { name: executionName })).execution.id).toBe(execution.execution.id);
    expect((await grpcCall(client, "ListExecutions", { name: "grpc.test/step" })).executions).toHaveLength(1);

    await grpcCall(client, "CreateEvent", {
      event: { artifact_id: artifact.artifact.id, execution_id: execution.execution.id, type: "OUTPUT" },
    });
    const events = await grpcCall(client, "ListEvents", { name: `executions/${execution.execution.id}` });
    expect(events.events).toHaveLength(1);
    // protobufjs turns int64 map keys into hash strings, so compare the values' ids.
    expect(Object.values(events.artifacts).map((a: any) => a.id)).toEqual([artifact.artifact.id]); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(Object.values(events.executions).map((e: any) => e.id)).toEqual([execution.execution.id]); // eslint-disable-line @typescript-eslint/no-explicit-any

    await grpcCall(client, "DeleteArtifact", { name: artifactName });
    await grpcCall(client, "DeleteExecution", { name: executionName });
    await grpcCall(client, "DeleteArtifactType", { name: "grpc.test/dataset" });
    await grpcCall(client, "DeleteExecutionType", { name: "execution_types/grpc.test/step" });
    await expectGrpcError(grpcCall(client, "GetArtifactType", { name: "grpc.test/dataset" }), grpc.status.NOT_FOUND);
  });

  it("maps domain errors to gRPC status codes with an api.Error detail", async () => {
    await expectGrpcError(
      grpcCall(client, "CreateArtifactType", { artifact_type: { name: "grpc.test/bad", properties: { x: "UNKNOWN" } } }),
      grpc.status.INVALID_ARGUMENT,
      /INT, DOUBLE or STRING/,
    );
    await expectGrpcError(
      grpcCall(client, "CreateArtifactType", { artifact_type: { name: "kubeflow.org/alpha/model", properties: {} } }),
      grpc.status.ALREADY_EXISTS,
    );
    await expectGrpcError(grpcCall(client, "GetArtifact", { name: "artifact_types/x/artifacts/1" }), grpc.status.NOT_FOUND);
    await expectGrpcError(grpcCall(client, "ListEvents", { name: "runs/1" }), grpc.status.INVALID_ARGUMENT);
  });
});
