import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { configSchema, fusionOf, loadConfig } from '../../src/config.ts';
import { RagError } from '../../src/errors.ts';

function configError(env: Record<string, string>): RagError {
  try {
    loadConfig(env);
  } catch (error) {
    return error as RagError;
  }
  throw new Error('expected loadConfig to throw');
}

/** The schema's variables, read from its shape so that a variable added later is covered too. */
const variables = Object.entries(configSchema.innerType().shape).map(([name, type]) => ({
  name,
  numeric: innermostType(type) instanceof z.ZodNumber,
}));
const numericVariables = variables.filter((variable) => variable.numeric).map((variable) => variable.name);
const otherVariables = variables.filter((variable) => !variable.numeric).map((variable) => variable.name);

function innermostType(type: z.ZodTypeAny): z.ZodTypeAny {
  if (type instanceof z.ZodDefault || type instanceof z.ZodOptional) return innermostType(type._def.innerType);
  if (type instanceof z.ZodEffects) return innermostType(type._def.schema);
  if (type instanceof z.ZodPipeline) return innermostType(type._def.in);
  return type;
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

  describe('an empty value counts as unset', () => {
    const defaults = loadConfig({});

    it('covers every numeric variable of the schema', () => {
      expect(numericVariables.length).toBeGreaterThan(10);
      expect(numericVariables).toEqual(expect.arrayContaining(['PORT', 'RAG_MIN_SCORE', 'SHUTDOWN_TIMEOUT_MS']));
      expect(otherVariables).toEqual(expect.arrayContaining(['HOST', 'LOG_LEVEL', 'QDRANT_URL', 'GATEWAY_MODEL']));
    });

    it.each(numericVariables)('%s empty or blank gives the default, not 0', (name) => {
      expect(loadConfig({ [name]: '' })[name as keyof typeof defaults]).toEqual(defaults[name as keyof typeof defaults]);
      expect(loadConfig({ [name]: '  ' })[name as keyof typeof defaults]).toEqual(defaults[name as keyof typeof defaults]);
    });

    it.each(otherVariables)('%s empty or blank gives the default', (name) => {
      expect(loadConfig({ [name]: '' })[name as keyof typeof defaults]).toEqual(defaults[name as keyof typeof defaults]);
      expect(loadConfig({ [name]: ' \t' })[name as keyof typeof defaults]).toEqual(defaults[name as keyof typeof defaults]);
    });

    it('keeps the documented defaults of PORT and RAG_MIN_SCORE', () => {
      expect(loadConfig({ PORT: '' }).PORT).toBe(8090);
      expect(loadConfig({ RAG_MIN_SCORE: '' }).RAG_MIN_SCORE).toBeUndefined();
      expect(loadConfig({ HOST: '', LOG_LEVEL: '', RAG_DATA_DIR: '' })).toMatchObject({
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        RAG_DATA_DIR: '.rag',
      });
    });

    it("lets a command's default apply under an empty value", () => {
      expect(loadConfig({ LOG_LEVEL: '' }, { LOG_LEVEL: 'warn' }).LOG_LEVEL).toBe('warn');
    });

    it('keeps the trailing space of a non-empty prefix', () => {
      expect(loadConfig({ EMBED_QUERY_PREFIX: 'query: ' }).EMBED_QUERY_PREFIX).toBe('query: ');
    });
  });
});

describe('fusion settings (RRF_K, FUSION_WEIGHTS)', () => {
  it('default to plain Qdrant RRF: k = 2, both legs weighing 1', () => {
    const config = loadConfig({});
    expect(fusionOf(config)).toEqual({ k: 2, weights: { dense: 1, sparse: 1 } });
  });

  it('read weights by leg name and a k', () => {
    expect(fusionOf(loadConfig({ FUSION_WEIGHTS: 'sparse:0.5,dense:2', RRF_K: '60' }))).toEqual({ k: 60, weights: { dense: 2, sparse: 0.5 } });
  });

  it('refuse malformed weights naming the variable and the expected form', () => {
    const error = configError({ FUSION_WEIGHTS: '2,1' });
    expect(error.code).toBe('RAG_CONFIG_INVALID');
    expect(error.message).toMatch(/FUSION_WEIGHTS: expected "dense:<weight>,sparse:<weight>"/);
    expect(configError({ FUSION_WEIGHTS: 'dense:1' }).message).toMatch(/FUSION_WEIGHTS: name both legs/);
    expect(configError({ RRF_K: '0' }).message).toMatch(/RRF_K/);
  });
});
