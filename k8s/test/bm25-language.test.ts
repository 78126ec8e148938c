/**
 * BM25_LANGUAGE decides the stems of the sparse leg: the ingest job's documents and the API's questions must be
 * stemmed alike, or the sparse leg matches nothing (and the collection refuses the other process with
 * RAG_LANGUAGE_MISMATCH). So both read it from the one ConfigMap they share, rag-config, and neither sets
 * its own: asserted on every overlay as `kubectl kustomize` renders it, down to the hashed ConfigMap name.
 */
import { join } from 'node:path';
import { configSchema, loadConfig } from '@rag/core';
import { describe, expect, it } from 'vitest';
import { baseDir, configuredOverlay, kustomize, kustomizeUnavailable, type Manifest, podSpecOf, readKustomization, workloads } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

const readers = ['retrieval', 'ingest'];

/** The ConfigMap names a container reads whole (envFrom), and whether its own env sets BM25_LANGUAGE. */
function languageSources(objects: Manifest[], name: string): { configMaps: string[]; ownValue: boolean } {
  const [container] = podSpecOf(workloads(objects).find((workload) => workload.metadata.name === name)).containers;
  return {
    configMaps: (container.envFrom ?? []).map((source: Manifest) => source.configMapRef?.name).filter(Boolean),
    ownValue: (container.env ?? []).some((variable: Manifest) => variable.name === 'BM25_LANGUAGE'),
  };
}

describe('BM25_LANGUAGE on Kubernetes', () => {
  it('is english in rag-config, the default of the config schema, and valid for it', () => {
    const ragConfig = readKustomization(baseDir).configMaps.get('rag-config')!;
    expect(ragConfig.BM25_LANGUAGE).toBe('english');
    expect(configSchema._def.schema.shape.BM25_LANGUAGE.parse(undefined)).toBe('english');
    expect(loadConfig({ ...ragConfig }).BM25_LANGUAGE).toBe('english');
  });

  describe.skipIf(Boolean(unavailable))('in every rendered overlay', () => {
    const gke = unavailable ? undefined : configuredOverlay();
    const overlays: Array<[string, Manifest[]]> = gke ? [['gke', gke.objects], ['gke-distributed', kustomize(join(gke.folder, '..', 'gke-distributed'))]] : [];

    it.each(overlays)('%s: the API and the ingest job read it from the same generated ConfigMap, neither sets its own', (_overlay, objects) => {
      const sources = readers.map((name) => languageSources(objects, name));
      for (const [index, source] of sources.entries()) expect(source.ownValue, `${readers[index]} sets BM25_LANGUAGE itself`).toBe(false);
      const shared = sources[0]!.configMaps.filter((configMap) => sources[1]!.configMaps.includes(configMap));
      const withLanguage = objects.filter((object) => object.kind === 'ConfigMap' && shared.includes(object.metadata.name) && object.data?.BM25_LANGUAGE);
      expect(withLanguage.map((configMap) => configMap.metadata.name)).toEqual([expect.stringMatching(/^rag-config-/)]);
      const perReader = sources.map((source) => objects.filter((object) => object.kind === 'ConfigMap' && source.configMaps.includes(object.metadata.name) && object.data?.BM25_LANGUAGE));
      expect(perReader.map((configMaps) => configMaps.length), 'one source of BM25_LANGUAGE each').toEqual([1, 1]);
    });
  });
});
