/**
 * The release recorded in the repository (issue 42, item 3; docs/releases.md): package.json's version is the one
 * the workspace packages carry, the CHANGELOG's newest entry, the tag the images are built with (the Dockerfile's
 * label, the runbook's TAG), the tag the manifests deploy (overlays/gke's images, the GitOps example's images) and
 * the `?ref=v…` at which the GitOps example consumes this repository's base and components. A release bumps all of
 * them together or this fails.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gitopsDir, type Manifest, overlayDir, ragDir, readYaml, releaseVersion, remoteTarget } from './render.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (path: string) => readFileSync(join(root, path), 'utf8');

describe('the release', () => {
  it('is a semantic version, recorded in every workspace package that has a version', () => {
    expect(releaseVersion).toMatch(/^\d+\.\d+\.\d+$/);
    // eval/package.json too once bumped (it was outside this change): docs/releases.md, step 1.
    for (const folder of ['k8s', 'packages/core', 'services/retrieval', 'ingest', 'eval']) {
      expect(JSON.parse(read(`${folder}/package.json`)).version, folder).toBe(releaseVersion);
    }
  });

  it('has a CHANGELOG entry, the newest, with upgrade notes', () => {
    const changelog = read('CHANGELOG.md');
    const entries = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$/gm)].map((match) => match[1]);
    expect(entries[0]).toBe(releaseVersion);
    const entry = changelog.slice(changelog.indexOf(`## [${releaseVersion}]`)).split(/^## \[/m)[1]!;
    expect(entry).toMatch(/^### Upgrade notes/m);
    expect(changelog).toContain(`[${releaseVersion}]: https://github.com/`);
  });

  it('is the tag the images are built with: the Dockerfile\'s label and the runbook\'s TAG', () => {
    expect(read('Dockerfile')).toContain(`ARG RAG_VERSION=${releaseVersion}\n`);
    const runbook = readFileSync(join(ragDir, 'README.md'), 'utf8');
    const tagLine = /^export TAG=(.*)$/m.exec(runbook)![1]!;
    // The runbook's TAG is read from package.json, as configure.sh's default is.
    expect(tagLine).toContain('package.json');
    expect(runbook).toContain(`retrieval:${releaseVersion}`);
    expect(readFileSync(join(overlayDir, 'configure.sh'), 'utf8')).toMatch(/TAG="\$\{TAG:-\$\(sed [^\n]*package\.json"[^\n]*\)\}"/);
  });

  it('is the tag the manifests deploy, and the ref the GitOps example consumes this repository at', () => {
    for (const folder of [overlayDir, gitopsDir]) {
      const kustomization = readYaml(join(folder, 'kustomization.yaml'))[0];
      const tags = Object.fromEntries(kustomization.images.filter((image: Manifest) => image.name.startsWith('rag-')).map((image: Manifest) => [image.name, image.newTag]));
      expect(tags, folder).toEqual({ 'rag-retrieval': releaseVersion, 'rag-ingest': releaseVersion });
    }
    const example = readYaml(join(gitopsDir, 'kustomization.yaml'))[0];
    const refs = [...example.resources, ...example.components].map((target: string) => remoteTarget.exec(target)?.[2]);
    expect(new Set(refs)).toEqual(new Set([`v${releaseVersion}`]));
  });
});
