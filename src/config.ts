// One typed configuration object from command-line flags and the environment (flags win).
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";

export interface Config {
  host: string;
  /** HTTP port: REST, Connect and gRPC-Web. */
  port: number;
  /** Native gRPC port. */
  grpcPort: number;
  dataDir: string;
  databaseUrl: string;
  authTokens: string[];
  logLevel: string;
  /** The local engine's cap on steps running at once, across all runs. */
  maxConcurrentSteps: number;
}

export class ConfigError extends Error {}

const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

// Flag name → environment variable it overrides.
const settings = {
  host: "HOST",
  port: "PORT",
  "grpc-port": "GRPC_PORT",
  "data-dir": "DATA_DIR",
  "database-url": "DATABASE_URL",
  "auth-tokens": "AUTH_TOKENS",
  "log-level": "LOG_LEVEL",
  "max-concurrent-steps": "MAX_CONCURRENT_STEPS",
} as const;
type Setting = keyof typeof settings;

function parseFlags(argv: readonly string[]): Partial<Record<Setting, string>> {
  const flags: Partial<Record<Setting, string>> = {};
  for (let i = 0; i < argv.length; i++) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(argv[i]);
    if (!match || !(match[1] in settings)) throw new ConfigError(`unknown argument "${argv[i]}"`);
    const value = match[2] ?? argv[++i];
    if (value === undefined) throw new ConfigError(`flag --${match[1]} needs a value`);
    flags[match[1] as Setting] = value;
  }
  return flags;
}

function port(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new ConfigError(`${name} must be a port number (0-65535), got "${value}"`);
  return n;
}

export function loadConfig(argv: readonly string[], env: NodeJS.ProcessEnv): Config {
  const flags = parseFlags(argv);
  const get = (setting: Setting) => flags[setting] ?? env[settings[setting]];
  const dataDir = resolve(get("data-dir") || "./data");
  const logLevel = get("log-level") || "info";
  if (!logLevels.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(", ")}, got "${logLevel}"`);
  const databaseUrl = get("database-url") || `file:${join(dataDir, "pipewright.db")}`;
  if (!/^(postgres(ql)?:\/\/|file:)/i.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must start with postgres://, postgresql:// or file:, got "${databaseUrl}"`);
  }
  return {
    host: get("host") || "127.0.0.1",
    port: port("PORT", get("port") || "8888"),
    grpcPort: port("GRPC_PORT", get("grpc-port") || "8887"),
    dataDir,
    databaseUrl,
    authTokens: (get("auth-tokens") ?? "")
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean),
    logLevel,
    maxConcurrentSteps: positiveInteger("MAX_CONCURRENT_STEPS", get("max-concurrent-steps") || String(availableParallelism())),
  };
}

function positiveInteger(name: string, value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new ConfigError(`${name} must be a whole number of at least 1, got "${value}"`);
  return Number(value);
}
