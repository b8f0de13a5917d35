// Bearer-token authentication shared by every transport.
import { createHash, timingSafeEqual } from "node:crypto";
import { unauthenticated } from "../errors.js";

export type Authenticator = (headers: Headers) => void;

const digest = (value: string) => createHash("sha256").update(value).digest();

/** Accepts any call when no tokens are configured; otherwise requires `Bearer <token>`. */
export function bearerAuthenticator(tokens: readonly string[]): Authenticator {
  if (tokens.length === 0) return () => {};
  // Comparing fixed-length digests keeps the comparison constant-time whatever the input length.
  const accepted = tokens.map(digest);
  return (headers) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
    if (!match) throw unauthenticated("missing bearer token: send 'authorization: Bearer <token>'");
    const offered = digest(match[1]);
    let ok = false;
    for (const token of accepted) ok = timingSafeEqual(token, offered) || ok;
    if (!ok) throw unauthenticated("invalid bearer token");
  };
}
