// The error type for problems in a workflow manifest or in the values flowing through it (an
// unresolved {{variable}}, a `when` that does not parse, a withParam that is not a list...).
// Its message becomes the failing node's message, so it says what is wrong in the user's terms.

/** A problem with the workflow itself, as opposed to a fault of the engine. */
export class WorkflowError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
  }
}
