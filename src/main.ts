// Command-line entry: read the configuration, start the server, stop cleanly on SIGTERM/SIGINT.
import { ConfigError, loadConfig, type Config } from "./config.js";
import { startPipewright } from "./server/pipewright.js";

let config: Config;
try {
  config = loadConfig(process.argv.slice(2), process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`pipewright: invalid configuration: ${err.message}`);
  process.exit(2);
}

const server = await startPipewright(config);
let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.log.info({ signal }, "shutting down");
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        server.log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  });
}
