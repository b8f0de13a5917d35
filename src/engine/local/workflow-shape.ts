// The structure the interpreter relies on, checked before a run starts: a manifest that is
// valid YAML but not a runnable workflow ends the run with an Error that says what is wrong.
const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const isName = (value: unknown) => typeof value === "string" && value !== "";
const isCount = (value: unknown, minimum: number) => value === undefined || (Number.isInteger(Number(value)) && Number(value) >= minimum);
const isSeconds = (value: unknown) => value === undefined || (Number.isFinite(Number(value)) && Number(value) >= 0);

function taskProblem(task: unknown, where: string): string | undefined {
  if (!isObject(task) || !isName(task.name) || !isName(task.template)) return `${where}: a task needs a name and a template`;
  const dependencies = task.dependencies;
  if (dependencies !== undefined && !(Array.isArray(dependencies) && dependencies.every(isName))) {
    return `${where}: dependencies of "${task.name}" must be a list of task names`;
  }
  return undefined;
}

function templateProblem(template: unknown, index: number): string | undefined {
  if (!isObject(template) || !isName(template.name)) return `spec.templates[${index}] needs a name`;
  const where = `template "${template.name}"`;
  if (!isCount(template.parallelism, 1)) return `${where}: parallelism must be a whole number of at least 1`;
  if (!isSeconds(template.activeDeadlineSeconds)) return `${where}: activeDeadlineSeconds must be a number of seconds`;
  if (template.retryStrategy !== undefined && !(isObject(template.retryStrategy) && isCount(template.retryStrategy.limit, 0))) {
    return `${where}: retryStrategy.limit must be a whole number`;
  }
  if (template.dag !== undefined) {
    if (!isObject(template.dag) || !Array.isArray(template.dag.tasks)) return `${where}: dag.tasks must be a list`;
    for (const task of template.dag.tasks) {
      const problem = taskProblem(task, where);
      if (problem) return problem;
    }
  }
  if (template.steps !== undefined) {
    if (!Array.isArray(template.steps) || !template.steps.every(Array.isArray)) return `${where}: steps must be a list of lists`;
    for (const step of template.steps.flat()) {
      const problem = taskProblem(step, where);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** What makes the workflow unrunnable, or undefined when its structure is sound. */
export function workflowShapeProblem(workflow: unknown): string | undefined {
  if (!isObject(workflow) || !isObject(workflow.metadata) || !isName(workflow.metadata.name)) return "the workflow has no metadata.name";
  const spec = workflow.spec;
  if (!isObject(spec)) return "the workflow has no spec";
  if (!isName(spec.entrypoint)) return "spec.entrypoint is required";
  if (!Array.isArray(spec.templates)) return "spec.templates must be a list";
  if (!isCount(spec.parallelism, 1)) return "spec.parallelism must be a whole number of at least 1";
  if (!isSeconds(spec.activeDeadlineSeconds)) return "spec.activeDeadlineSeconds must be a number of seconds";
  const parameters = isObject(spec.arguments) ? spec.arguments.parameters : undefined;
  if (parameters !== undefined && !(Array.isArray(parameters) && parameters.every((p) => isObject(p) && isName(p.name)))) {
    return "spec.arguments.parameters must be a list of named parameters";
  }
  for (const [index, template] of spec.templates.entries()) {
    const problem = templateProblem(template, index);
    if (problem) return problem;
  }
  return undefined;
}
