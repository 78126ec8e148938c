/**
 * The gke-public overlay: a GKE Ingress (https://cloud.google.com/kubernetes-engine/docs/concepts/ingress)
 * routing only the client routes to the API over HTTPS with a Google-managed certificate
 * (networking.gke.io/v1 ManagedCertificate), and a BackendConfig whose timeout lets a /chat answer finish.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configuredOverlay, kustomize, kustomizeUnavailable, type Manifest, podSpecOf } from './render.ts';

const unavailable = kustomizeUnavailable();
if (unavailable) console.warn(unavailable);

describe.skipIf(Boolean(unavailable))('the gke-public overlay', () => {
  const objects: Manifest[] = unavailable ? [] : kustomize(join(configuredOverlay().folder, '..', 'gke-public'));
  const find = (kind: string, name: string): Manifest => objects.find((object) => object.kind === kind && object.metadata.name === name);
  const ingress = () => find('Ingress', 'retrieval');

  it('routes /search, /chat, /v1 and /mcp to the API, and nothing else (no /metrics, no /readyz)', async () => {
    const paths = ingress().spec.rules.flatMap((rule: Manifest) => rule.http.paths);
    expect(paths.map((path: Manifest) => path.path).sort()).toEqual(['/chat', '/mcp', '/search', '/v1']);
    for (const path of paths) expect(path.backend.service).toEqual({ name: 'retrieval', port: { number: 8090 } });
    expect(ingress().spec.defaultBackend).toBeUndefined();
    const { Ingress } = await import('kubernetes-models/networking.k8s.io/v1/Ingress');
    expect(() => new Ingress(ingress()).validate()).not.toThrow();
  });

  it('serves HTTPS only, with the managed certificate it names', () => {
    const annotations = ingress().metadata.annotations;
    expect(annotations['kubernetes.io/ingress.allow-http']).toBe('false');
    expect(find('ManagedCertificate', annotations['networking.gke.io/managed-certificates']).spec.domains.length).toBeGreaterThan(0);
  });

  it('waits on the backend as long as a /chat answer may take, within the API pod\'s grace period', () => {
    const service = find('Service', 'retrieval');
    const backend = find('BackendConfig', JSON.parse(service.metadata.annotations['cloud.google.com/backend-config']).default);
    const pod = podSpecOf(find('Deployment', 'retrieval'));
    const gatewaySeconds = Number(pod.containers[0].env.find((variable: Manifest) => variable.name === 'GATEWAY_TIMEOUT_MS').value) / 1000;
    expect(backend.spec.timeoutSec).toBeGreaterThan(gatewaySeconds);
    expect(backend.spec.timeoutSec).toBeLessThanOrEqual(pod.terminationGracePeriodSeconds);
    expect(backend.spec.healthCheck.requestPath).toBe(pod.containers[0].readinessProbe.httpGet.path);
    // A rollout lets an answer in flight finish for SHUTDOWN_TIMEOUT_MS: the load balancer must not cut it first.
    const drainSeconds = Number(pod.containers[0].env.find((variable: Manifest) => variable.name === 'SHUTDOWN_TIMEOUT_MS').value) / 1000;
    expect(backend.spec.connectionDraining.drainingTimeoutSec).toBeGreaterThanOrEqual(drainSeconds);
    expect(backend.spec.connectionDraining.drainingTimeoutSec).toBeLessThanOrEqual(3600);
    expect(JSON.parse(service.metadata.annotations['cloud.google.com/neg'])).toEqual({ ingress: true });
  });
});
