// With AUTH_TOKENS set, every RPC on every transport needs the bearer token; health stays open.
import * as grpc from "@grpc/grpc-js";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpcCall, startTestServer, type TestServer } from "../helpers/server.js";

describe("bearer-token auth", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ authTokens: ["s3cret", "other-token"] });
  });
  afterAll(async () => {
    await t.close();
  });

  it("guards REST and leaves /healthz open", async () => {
    const path = "/api/v1alpha1/artifact_types";
    const missing = await t.rest("GET", path);
    expect(missing.status).toBe(401);
    expect(missing.body).toMatchObject({ code: 16, message: expect.stringMatching(/bearer/i) });
    expect((await t.rest("GET", path, undefined, { authorization: "Bearer wrong" })).status).toBe(401);
    expect((await t.rest("GET", path, undefined, { authorization: "Basic czNjcmV0" })).status).toBe(401);
    expect((await t.rest("GET", path, undefined, { authorization: "Bearer s3cret" })).status).toBe(200);
    expect((await t.rest("GET", path, undefined, { authorization: "bearer other-token" })).status).toBe(200);
    expect((await t.rest("GET", "/healthz")).status).toBe(200);
    const kfpHealth = await t.rest("GET", "/apis/v1beta1/healthz");
    expect(kfpHealth.status).toBe(200);
    expect(kfpHealth.body).toMatchObject({ status: "SERVING", commit_sha: expect.any(String) });
  });

  it("guards native gRPC", async () => {
    const client = t.grpc();
    const denied = await grpcCall(client, "ListArtifactTypes", {}).catch((e: grpc.ServiceError) => e);
    expect((denied as grpc.ServiceError).code).toBe(grpc.status.UNAUTHENTICATED);
    const metadata = new grpc.Metadata();
    metadata.set("authorization", "Bearer s3cret");
    const ok = await grpcCall(client, "ListArtifactTypes", {}, metadata);
    expect(ok.artifact_types.length).toBeGreaterThan(0);
  });

  it.each(["connect-json", "connect-binary", "grpc-web"] as const)("guards %s", async (transport) => {
    const client = t.connect(transport);
    const denied = await client.listArtifactTypes({}).catch((e: unknown) => ConnectError.from(e));
    expect((denied as ConnectError).code).toBe(Code.Unauthenticated);
    const ok = await client.listArtifactTypes({}, { headers: { authorization: "Bearer s3cret" } });
    expect(ok.artifactTypes.length).toBeGreaterThan(0);
  });
});
