import { createLogger, isRagError, loadConfig, type Config, type Logger } from '@rag/core';

/**
 * How a process of this service starts: the environment is validated first (a bad value exits 2 with
 * the variable's name), then `main` runs with the configured logger. A failure at startup is logged
 * once as fatal; a configuration error found later (e.g. a bad RAG_AUTH_FILE) also exits 2, anything
 * else 1.
 */
export function runEntryPoint(main: (config: Config, logger: Logger) => Promise<void>, failure: string): void {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT });
  main(config, logger).catch((error: unknown) => {
    if (isRagError(error)) logger.fatal({ code: error.code, cause: error.cause }, error.message);
    else logger.fatal({ err: error }, failure);
    process.exit(isRagError(error) && error.code === 'RAG_CONFIG_INVALID' ? 2 : 1);
  });
}
