/**
 * A GCS object's search metadata comes from its listing: type from the name, `size`, `updated` as the modified
 * time, and every custom metadata key but `rag-groups` as a custom field (the GCS JSON API's object resource:
 * https://cloud.google.com/storage/docs/json_api/v1/objects#resource).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GcsSource } from '../../src/ingestion.ts';
import type { SourceDocument } from '../../src/sources/document-source.ts';
import { FakeGcsServer } from '../ingest/fake-gcs-server.ts';

let server: FakeGcsServer;

beforeEach(async () => {
  server = await new FakeGcsServer('team-docs', 10).start();
});

afterEach(async () => {
  await server.close();
});

describe('GcsSource metadata', () => {
  it('gives each object its type, size, updated time and custom fields, rag-groups left to access', async () => {
    server.put('handbook/ops/Guide.MD', '# Guide\n\nsome text', { team: 'platform', tier: 'gold', 'rag-groups': 'hr' });
    server.put('handbook/readme', 'plain');
    const listed: SourceDocument[] = [];
    for await (const document of new GcsSource({ bucket: 'team-docs', prefix: 'handbook/', apiEndpoint: server.baseUrl }).list()) listed.push(document);
    const metadataOf = (uri: string) => listed.find((document) => document.uri === uri)?.metadata;
    // The fake lists every object as updated 2026-01-01T00:00:00.000Z.
    expect(metadataOf('gs://team-docs/handbook/ops/Guide.MD')).toEqual({ type: 'md', size: 18, modifiedAt: 1_767_225_600, meta: { team: 'platform', tier: 'gold' } });
    expect(metadataOf('gs://team-docs/handbook/readme')).toEqual({ type: '', size: 5, modifiedAt: 1_767_225_600, meta: {} });
  });
});
