// What `{{...}}` can name while a template runs: workflow variables, the template's inputs, loop
// items, and the outputs of the tasks or steps that finished before. Artifacts are kept apart:
// they are passed by reference (`from: "{{tasks.x.outputs.artifacts.y}}"`), never as text.
import type { ArtifactValue } from "./node-tree.js";
import { scopeLookup, type VariableLookup } from "./template-vars.js";

/** A finished template's outputs, as its caller sees them. */
export interface Outputs {
  parameters: Record<string, string>;
  artifacts: Record<string, ArtifactValue>;
  result?: string;
  exitCode?: string;
}

export const noOutputs = (): Outputs => ({ parameters: {}, artifacts: {} });

export class Scope {
  constructor(
    readonly variables: Record<string, string> = {},
    readonly artifacts: Record<string, ArtifactValue> = {},
    private readonly parent?: Scope,
  ) {}

  /** A scope that sees this one, plus its own entries (which win). */
  child(variables: Record<string, string> = {}, artifacts: Record<string, ArtifactValue> = {}): Scope {
    return new Scope({ ...variables }, { ...artifacts }, this);
  }

  /** This scope and its ancestors, nearest first. */
  private chain(): Scope[] {
    return [this, ...(this.parent?.chain() ?? [])];
  }

  lookup(): VariableLookup {
    return scopeLookup(...this.chain().map((scope) => scope.variables));
  }

  artifact(reference: string): ArtifactValue | undefined {
    return this.chain().find((scope) => reference in scope.artifacts)?.artifacts[reference];
  }

  /** Publishes a task's or step's outputs as `<prefix>.<name>.outputs.…` (prefix: tasks | steps). */
  record(prefix: "tasks" | "steps", name: string, nodeId: string, phase: string, outputs: Outputs): void {
    const base = `${prefix}.${name}`;
    this.variables[`${base}.id`] = nodeId;
    this.variables[`${base}.status`] = phase;
    for (const [key, value] of Object.entries(outputs.parameters)) this.variables[`${base}.outputs.parameters.${key}`] = value;
    if (outputs.result !== undefined) this.variables[`${base}.outputs.result`] = outputs.result;
    if (outputs.exitCode !== undefined) this.variables[`${base}.outputs.exitCode`] = outputs.exitCode;
    for (const [key, value] of Object.entries(outputs.artifacts)) this.artifacts[`${base}.outputs.artifacts.${key}`] = value;
  }
}

/** `{{tasks.a.outputs.artifacts.b}}` → `tasks.a.outputs.artifacts.b`; anything else → undefined. */
export function artifactReference(from: string): string | undefined {
  return /^\{\{\s*([^{}\s]+)\s*\}\}$/.exec(from.trim())?.[1];
}
