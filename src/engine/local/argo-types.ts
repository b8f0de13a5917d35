// The parts of the Argo Workflow (argoproj.io/v1alpha1) spec the local engine reads. Loose on
// purpose: manifests come from users and are checked as they are interpreted.

export interface ArgoParameter {
  name: string;
  value?: string;
  default?: string;
  valueFrom?: { path?: string; parameter?: string; default?: string };
}

export interface ArgoArtifact {
  name: string;
  path?: string;
  from?: string;
  optional?: boolean;
  raw?: { data: string };
  s3?: { key: string };
}

export interface ArgoArguments {
  parameters?: ArgoParameter[];
  artifacts?: ArgoArtifact[];
}

export interface ArgoLoop {
  withItems?: unknown[];
  withParam?: string;
  withSequence?: { count?: string | number; start?: string | number; end?: string | number; format?: string };
}

export interface ArgoTask extends ArgoLoop {
  name: string;
  template: string;
  arguments?: ArgoArguments;
  dependencies?: string[];
  when?: string;
  continueOn?: { failed?: boolean; error?: boolean };
}

export interface ArgoContainer {
  image?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
  workingDir?: string;
  volumeMounts?: { name: string; mountPath: string }[];
}

export interface ArgoTemplate {
  name: string;
  inputs?: ArgoArguments;
  outputs?: ArgoArguments;
  container?: ArgoContainer;
  script?: ArgoContainer & { source: string };
  dag?: { tasks: ArgoTask[] };
  steps?: ArgoTask[][];
  resource?: unknown;
  suspend?: unknown;
  sidecars?: unknown[];
  daemon?: boolean;
  retryStrategy?: { limit?: number | string; retryPolicy?: string };
  activeDeadlineSeconds?: number | string;
  timeout?: string;
  parallelism?: number;
}

export interface ArgoWorkflow {
  metadata: { name: string; uid?: string; [key: string]: unknown };
  spec: {
    entrypoint: string;
    arguments?: ArgoArguments;
    templates: ArgoTemplate[];
    onExit?: string;
    activeDeadlineSeconds?: number | string;
    parallelism?: number;
    [key: string]: unknown;
  };
  status?: Record<string, unknown>;
  [key: string]: unknown;
}
