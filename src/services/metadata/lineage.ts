// Events: which artifact an execution read or wrote, and the lineage views built from them.
import { Event_Type } from "../../../gen/proto/ml_metadata/metadata_store_pb.js";
import { invalidArgument, notFound } from "../../errors.js";
import type { EventStore, StoredEvent } from "../../store/metadata/event-store.js";
import type { NodeStore, StoredNode } from "../../store/metadata/node-store.js";
import { eventOwnerParts } from "./names.js";

export interface EventInput {
  artifactId?: bigint;
  executionId?: bigint;
  type: number;
  millisecondsSinceEpoch?: bigint;
  path?: StoredEvent["path"];
}

export interface EventsView {
  events: StoredEvent[];
  artifacts: StoredNode[];
  executions: StoredNode[];
}

export class Lineage {
  constructor(
    private readonly events: EventStore,
    private readonly nodes: NodeStore,
    private readonly now: () => number = Date.now,
  ) {}

  async record(event: EventInput): Promise<void> {
    if (event.artifactId === undefined) throw invalidArgument("event.artifact_id is required");
    if (event.executionId === undefined) throw invalidArgument("event.execution_id is required");
    if (!(event.type in Event_Type) || event.type === Event_Type.UNKNOWN) {
      throw invalidArgument("event.type is required: DECLARED_OUTPUT, DECLARED_INPUT, INPUT or OUTPUT");
    }
    if (!(await this.nodes.byId("artifact", event.artifactId))) throw notFound(`artifact ${event.artifactId} not found`);
    if (!(await this.nodes.byId("execution", event.executionId))) {
      throw notFound(`execution ${event.executionId} not found`);
    }
    await this.events.insert({
      artifactId: event.artifactId,
      executionId: event.executionId,
      type: event.type,
      millisecondsSinceEpoch: event.millisecondsSinceEpoch ?? BigInt(this.now()),
      path: event.path,
    });
  }

  /** `artifacts/<id>` or `executions/<id>`: its events and every node they mention. */
  async eventsOf(name: string): Promise<EventsView> {
    const { side, id } = eventOwnerParts(name);
    const events = await this.events.listFor(side, id);
    const distinct = (ids: bigint[]) => [...new Set(ids)];
    const [artifacts, executions] = await Promise.all([
      this.nodes.byIds("artifact", distinct(events.map((e) => e.artifactId))),
      this.nodes.byIds("execution", distinct(events.map((e) => e.executionId))),
    ]);
    return { events, artifacts, executions };
  }
}
