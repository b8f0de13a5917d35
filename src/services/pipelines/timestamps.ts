// Stored times are epoch milliseconds; the API carries google.protobuf.Timestamp.
import { timestampFromMs, timestampMs, type Timestamp } from "@bufbuild/protobuf/wkt";

export const toTimestamp = (ms: bigint): Timestamp => timestampFromMs(Number(ms));

export const toMillis = (timestamp: Timestamp | undefined): bigint | undefined =>
  timestamp ? BigInt(timestampMs(timestamp)) : undefined;

export const nowMillis = (): bigint => BigInt(Date.now());
