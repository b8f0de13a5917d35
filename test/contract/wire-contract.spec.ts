// Our .proto files must be wire-identical to the originals: one test per message, enum and
// service of ../shared/spec/wire-contract.json, compared with the compiled descriptors in gen/.
import { describe, expect, it } from "vitest";
import {
  compareEnum,
  compareMessage,
  compareService,
  loadGeneratedRegistry,
  loadWireContract,
} from "./compare-descriptors.js";

const contract = loadWireContract();
const registry = await loadGeneratedRegistry();

describe("wire contract", () => {
  it.each(Object.keys(contract.messages))("message %s", (name) => {
    expect(compareMessage(contract, registry, name)).toEqual([]);
  });
  it.each(Object.keys(contract.enums))("enum %s", (name) => {
    expect(compareEnum(contract, registry, name)).toEqual([]);
  });
  it.each(Object.keys(contract.services))("service %s", (name) => {
    expect(compareService(contract, registry, name)).toEqual([]);
  });
});
