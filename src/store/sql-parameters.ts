// Bound parameters for hand-written SQL, in each provider's placeholder style ($1… or ?).
import type { Provider } from "./migrate.js";

export class SqlParameters<Value = unknown> {
  readonly values: Value[] = [];

  constructor(private readonly provider: Provider) {}

  /** Binds a value; returns its placeholder. */
  add(value: Value): string {
    this.values.push(value);
    return this.provider === "postgresql" ? `$${this.values.length}` : "?";
  }
}
