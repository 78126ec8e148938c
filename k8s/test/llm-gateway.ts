/**
 * The LLM gateway's rendered form, shared by llm-gateway.test.ts (the manifests) and llm-gateway-envoy.real.test.ts
 * (the bootstrap in the real Envoy): overlays/gke-llm as the runbook leaves it, and the Envoy bootstrap its pod reads.
 */
import { join } from 'node:path';
import { parse } from 'yaml';
import { configuredOverlay, kustomize, type Manifest, podSpecOf } from './render.ts';

const find = (objects: Manifest[], kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);

/** overlays/gke-llm as the runbook leaves it: a copy of k8s/rag with the gke overlay configured. */
export function gkeLlm(): Manifest[] {
  const { folder } = configuredOverlay();
  return kustomize(join(folder, '..', 'gke-llm'));
}

/** The Envoy bootstrap the gateway's pod reads: envoy.yaml of the ConfigMap mounted at the directory `-c` names. */
export function gatewayBootstrap(objects: Manifest[]): Manifest {
  const gateway = find(objects, 'Deployment', 'llm-gateway');
  const envoy = podSpecOf(gateway).containers.find((candidate: Manifest) => candidate.name === 'envoy');
  const path: string = envoy.args[envoy.args.indexOf('-c') + 1];
  const mount = envoy.volumeMounts.find((candidate: Manifest) => path.startsWith(`${candidate.mountPath}/`));
  const volume = podSpecOf(gateway).volumes.find((candidate: Manifest) => candidate.name === mount.name);
  const configMap = find(objects, 'ConfigMap', volume.configMap.name);
  return parse(configMap.data[path.slice(mount.mountPath.length + 1)]);
}

