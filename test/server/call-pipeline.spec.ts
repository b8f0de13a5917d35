// The call pipeline every transport shares: auth first, then the implementation, errors normalised.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { ErrorSchema } from "../../gen/proto/kfp/error_pb.js";
import { GetArtifactTypeRequestSchema, MetadataService, type GetArtifactTypeResponse } from "../../gen/proto/metadata/service_pb.js";
import { bearerAuthenticator } from "../../src/server/auth.js";
import { bindService, CallPipeline, type CallInfo } from "../../src/server/call-pipeline.js";

const info = (headers: Record<string, string> = {}): CallInfo => ({
  protocolName: "test",
  requestMethod: "POST",
  url: "/api.MetadataService/GetArtifactType",
  headers: new Headers(headers),
});
const request = create(GetArtifactTypeRequestSchema, { name: "x" });
const method = MetadataService.method.getArtifactType;

async function failure(promise: Promise<unknown>): Promise<ConnectError> {
  return promise.then(
    () => expect.fail("call succeeded"),
    (err: unknown) => err as ConnectError,
  );
}

describe("CallPipeline", () => {
  it("answers Unimplemented, with an api.Error detail, for a method without a handler", async () => {
    const pipeline = new CallPipeline([bindService(MetadataService, {})], bearerAuthenticator([]), () => {});
    const err = await failure(pipeline.call(method, request, info()));
    expect(err.code).toBe(Code.Unimplemented);
    expect(err.findDetails(ErrorSchema)).toHaveLength(1);
  });

  it("checks auth before running the handler", async () => {
    let ran = false;
    const impl = { getArtifactType: () => ((ran = true), {}) };
    const pipeline = new CallPipeline([bindService(MetadataService, impl)], bearerAuthenticator(["t"]), () => {});
    expect((await failure(pipeline.call(method, request, info()))).code).toBe(Code.Unauthenticated);
    expect(ran).toBe(false);
    await pipeline.call(method, request, info({ authorization: "Bearer t" }));
    expect(ran).toBe(true);
  });

  it("hides an unexpected error behind Internal and reports it", async () => {
    const reported: unknown[] = [];
    const impl = {
      getArtifactType: () => {
        throw new Error("SELECT * FROM secret_table failed at /srv/app.js:12");
      },
    };
    const pipeline = new CallPipeline([bindService(MetadataService, impl)], bearerAuthenticator([]), (e) => reported.push(e));
    const err = await failure(pipeline.call(method, request, info()));
    expect(err.code).toBe(Code.Internal);
    expect(err.message).not.toMatch(/SELECT|secret|\.js/);
    expect(reported).toHaveLength(1);
  });

  it("fills in a plain object result as the output message", async () => {
    const impl = { getArtifactType: () => ({ artifactType: { name: "n" } }) };
    const pipeline = new CallPipeline([bindService(MetadataService, impl)], bearerAuthenticator([]), () => {});
    const out = await pipeline.call<GetArtifactTypeResponse>(method, request, info());
    expect(out.artifactType?.name).toBe("n");
  });
});
