// One error vocabulary for every transport: handlers throw ConnectErrors carrying an api.Error
// detail; this module maps them to HTTP statuses and the apiStatus JSON body REST callers expect.
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorSchema } from "../gen/proto/kfp/error_pb.js";

/** A client-facing error with a gRPC code and the api.Error detail the original servers sent. */
export function apiError(code: Code, message: string, details = message): ConnectError {
  return new ConnectError(message, code, undefined, [
    { desc: ErrorSchema, value: create(ErrorSchema, { errorMessage: message, errorDetails: details }) },
  ]);
}

export const invalidArgument = (message: string) => apiError(Code.InvalidArgument, message);
export const notFound = (message: string) => apiError(Code.NotFound, message);
export const alreadyExists = (message: string) => apiError(Code.AlreadyExists, message);
export const failedPrecondition = (message: string) => apiError(Code.FailedPrecondition, message);
export const unauthenticated = (message: string) => apiError(Code.Unauthenticated, message);

/**
 * Normalises anything a handler threw. ConnectErrors pass through (gaining an api.Error detail
 * if they lack one); anything else is a server fault whose text must not reach the client.
 */
export function toConnectError(err: unknown, onInternal: (err: unknown) => void): ConnectError {
  if (err instanceof ConnectError) {
    if (err.details.length > 0) return err;
    return apiError(err.code, err.rawMessage);
  }
  onInternal(err);
  return apiError(Code.Internal, "internal server error");
}

// grpc-gateway's mapping from gRPC code to HTTP status.
const httpStatusByCode: Record<Code, number> = {
  [Code.Canceled]: 408,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export function httpStatusFromCode(code: Code): number {
  return httpStatusByCode[code] ?? 500;
}

export interface ApiStatusBody {
  error: string;
  message: string;
  code: number;
  details: Array<{ "@type": string; error_message?: string; error_details?: string }>;
}

/** The REST error body: apiStatus with api.Error details, as the original gateway wrote it. */
export function apiStatusBody(err: ConnectError): ApiStatusBody {
  const details = err.findDetails(ErrorSchema).map((d) => ({
    "@type": "type.googleapis.com/api.Error",
    error_message: d.errorMessage,
    error_details: d.errorDetails,
  }));
  return { error: err.rawMessage, message: err.rawMessage, code: err.code, details };
}
