// The metadata API through Connect-generated clients: Connect JSON, Connect binary and gRPC-Web.
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorSchema } from "../../gen/proto/kfp/error_pb.js";
import { Event_Type, PropertyType } from "../../gen/proto/ml_metadata/metadata_store_pb.js";
import { databases, startTestServer, type TestServer } from "../helpers/server.js";

describe.each(databases)("metadata over Connect on %s", (database) => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ database });
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(["connect-json", "connect-binary", "grpc-web"] as const)("creates and reads lineage over %s", async (transport) => {
    const client = t.connect(transport);
    const typeName = `connect.test/${transport}`;
    const { artifactType } = await client.createArtifactType({
      artifactType: { name: typeName, properties: { size: PropertyType.INT } },
    });
    expect(artifactType?.id).toBeGreaterThan(0n);
    const { artifact } = await client.createArtifact({
      parent: `artifact_types/${typeName}`,
      artifact: { uri: "file:///x", properties: { size: { value: { case: "intValue", value: 42n } } } },
    });
    const { execution } = await client.createExecution({ parent: "execution_types/kubeflow.org/alpha/execution", execution: {} });
    await client.createEvent({ event: { artifactId: artifact!.id, executionId: execution!.id, type: Event_Type.INPUT } });
    const view = await client.listEvents({ name: `artifacts/${artifact!.id}` });
    expect(view.events).toHaveLength(1);
    expect(view.artifacts[artifact!.id.toString()].properties.size.value).toEqual({ case: "intValue", value: 42n });
    expect((await client.getArtifact({ name: `artifact_types/${typeName}/artifacts/${artifact!.id}` })).artifact?.uri).toBe(
      "file:///x",
    );
  });

  it.each(["connect-json", "connect-binary", "grpc-web"] as const)("reports errors with code and detail over %s", async (transport) => {
    const err = await t
      .connect(transport)
      .getArtifactType({ name: "no.such/type" })
      .then(
        () => expect.fail("call succeeded"),
        (e: unknown) => ConnectError.from(e),
      );
    expect(err.code).toBe(Code.NotFound);
    expect(err.findDetails(ErrorSchema)[0]?.errorMessage).toMatch(/no\.such\/type/);
  });
});
