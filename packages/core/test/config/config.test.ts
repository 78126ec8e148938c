import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { RagError } from '../../src/errors.ts';

function configError(env: Record<string, string>): RagError {
  try {
    loadConfig(env);
  } catch (error) {
    return error as RagError;
  }
  throw new Error('expected loadConfig to throw');
}

describe('loadConfig', () => {
  it('gives the seed defaults on an empty environment', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 8090,
      HOST: '127.0.0.1',
      RAG_DATA_DIR: '.rag',
      collection: 'docs-v2',
      EMBED_BATCH_SIZE: 32,
      RERANK_CANDIDATES: 50,
      GATEWAY_MODEL: 'qwen3-4b-cpu',
      TOP_K: 5,
      CHUNK_SIZE: 1200,
      CHUNK_OVERLAP: 200,
      EMBED_TIMEOUT_MS: 30_000,
      RERANK_TIMEOUT_MS: 120_000,
      GATEWAY_TIMEOUT_MS: 300_000,
    });
    expect(config.QDRANT_URL).toBeUndefined();
    expect(config.EMBED_URL).toBeUndefined();
  });

  it('reads numbers from strings and treats empty strings as unset', () => {
    const config = loadConfig({ PORT: '9000', TOP_K: '8', QDRANT_URL: '', EMBED_MODEL: ' ' });
    expect(config.PORT).toBe(9000);
    expect(config.TOP_K).toBe(8);
    expect(config.QDRANT_URL).toBeUndefined();
    expect(config.EMBED_MODEL).toBeUndefined();
  });

  it("takes a command's defaults for what the environment leaves unset, never over it", () => {
    expect(loadConfig({}, { LOG_LEVEL: 'warn' }).LOG_LEVEL).toBe('warn');
    expect(loadConfig({ LOG_LEVEL: 'debug' }, { LOG_LEVEL: 'warn' }).LOG_LEVEL).toBe('debug');
  });

  it('prefers QDRANT_COLLECTION, then RAG_COLLECTION', () => {
    expect(loadConfig({ RAG_COLLECTION: 'docs-v3' }).collection).toBe('docs-v3');
    expect(loadConfig({ RAG_COLLECTION: 'docs-v3', QDRANT_COLLECTION: 'prod' }).collection).toBe('prod');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT', 'number'],
    [{ TOP_K: '0' }, 'TOP_K', 'greater than or equal to 1'],
    [{ EMBED_BATCH_SIZE: '2.5' }, 'EMBED_BATCH_SIZE', 'integer'],
    [{ QDRANT_URL: 'qdrant:6333' }, 'QDRANT_URL', 'http(s) URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL', 'fatal'],
    [{ CHUNK_SIZE: '500', CHUNK_OVERLAP: '600' }, 'CHUNK_OVERLAP', 'smaller than CHUNK_SIZE'],
  ])('refuses %j naming the variable and the expected form', (env, variable, expected) => {
    const error = configError(env);
    expect(error.code).toBe('RAG_CONFIG_INVALID');
    expect(error.message).toContain(variable);
    expect(error.message).toContain(expected);
  });
});
