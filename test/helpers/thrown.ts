// Assertions on what a synchronous call throws.
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "vitest";

/** The error `fn` throws; fails the test when it returns. */
export function thrownBy(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected an error");
}

/** `fn` throws an InvalidArgument ConnectError whose message matches. */
export function expectInvalidArgument(fn: () => unknown, message: RegExp): void {
  const err = thrownBy(fn);
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(Code.InvalidArgument);
  expect((err as ConnectError).rawMessage).toMatch(message);
}

/** The ConnectError `fn` throws. */
export function thrownConnectError(fn: () => unknown): ConnectError {
  const err = thrownBy(fn);
  expect(err).toBeInstanceOf(ConnectError);
  return err as ConnectError;
}
