/**
 * Kubernetes rules about StatefulSets that the manifests depend on, written as Kubernetes applies them, so a
 * test derives the outcome from the objects instead of matching text.
 *
 * - Pod identity: the StatefulSet controller gives pod N the name `<set>-N`, `spec.hostname` = that name and
 *   `spec.subdomain` = `spec.serviceName` (kubernetes pkg/controller/statefulset/stateful_set_utils.go,
 *   initIdentity/updateIdentity), set once when the pod is created.
 * - Per-pod DNS: the endpoint of a pod carries its hostname only for the Service named like its subdomain in its
 *   namespace (pkg/controller/util/endpoint/controller_utils.go, ShouldSetHostname), and cluster DNS publishes
 *   `<hostname>.<service>.<namespace>.svc.<zone>` for such endpoints of headless Services only (Kubernetes DNS
 *   specification, github.com/kubernetes/dns docs/specification.md, "Records for a Headless Service"; "A/AAAA
 *   records" of https://kubernetes.io/docs/concepts/services-networking/dns-pod-service/#pod-s-hostname-and-subdomain-fields).
 * - Updates: the API server refuses to change a StatefulSet's spec "for fields other than 'replicas',
 *   'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy'
 *   and 'minReadySeconds'" (pkg/apis/apps/validation/validation.go, ValidateStatefulSetUpdate).
 * - Claims: pod N mounts the claim `<template>-<set>-N` of each volumeClaimTemplate, created once and kept
 *   (stateful_set_utils.go, getPersistentVolumeClaimName).
 */
import type { Manifest } from './render.ts';

export interface PeerIdentity {
  pod: string;
  hostname: string;
  subdomain: string;
  namespace: string;
  labels: Record<string, string>;
}

export function peerIdentities(set: Manifest, replicas: number = set.spec.replicas ?? 1): PeerIdentity[] {
  return Array.from({ length: replicas }, (_, ordinal) => {
    const pod = `${set.metadata.name}-${ordinal}`;
    return { pod, hostname: pod, subdomain: set.spec.serviceName, namespace: set.metadata.namespace, labels: set.spec.template.metadata.labels };
  });
}

export function shouldSetHostname(pod: PeerIdentity, service: Manifest): boolean {
  return pod.hostname.length > 0 && pod.subdomain === service.metadata.name && service.metadata.namespace === pod.namespace;
}

function selects(service: Manifest, labels: Record<string, string>): boolean {
  const selector: Record<string, string> = service.spec.selector ?? {};
  return Object.keys(selector).length > 0 && Object.entries(selector).every(([key, value]) => labels[key] === value);
}

/**
 * Each pod's own DNS name, as cluster DNS would answer it, or why it has none: no Service of that name, a Service
 * that is not headless, one that does not select the pod.
 */
export function podDnsName(pod: PeerIdentity, objects: Manifest[], zone = 'cluster.local'): { name?: string; problem?: string } {
  const service = objects.find((object) => object.kind === 'Service' && shouldSetHostname(pod, object));
  if (!service) return { problem: `${pod.pod}: no Service named ${pod.subdomain} (its subdomain) in ${pod.namespace}` };
  if (service.spec.clusterIP !== 'None') return { problem: `${pod.pod}: Service ${service.metadata.name} is not headless (clusterIP ${service.spec.clusterIP ?? 'allocated'}), so DNS has no per-pod records` };
  if (!selects(service, pod.labels)) return { problem: `${pod.pod}: Service ${service.metadata.name} does not select the pod` };
  return { name: `${pod.hostname}.${pod.subdomain}.${pod.namespace}.svc.${zone}` };
}

/** StatefulSet spec fields the API server lets an update change. */
export const mutableStatefulSetFields = new Set(['replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', 'minReadySeconds']);

/** Defaults the API server fills in, so that a field left out compares equal to its default. */
const statefulSetDefaults: Record<string, unknown> = { podManagementPolicy: 'OrderedReady' };

/** The spec fields that differ between two StatefulSets and that `kubectl apply` of `after` over `before` is refused for. */
export function forbiddenStatefulSetChanges(before: Manifest, after: Manifest): string[] {
  const fields = new Set([...Object.keys(before.spec), ...Object.keys(after.spec), ...Object.keys(statefulSetDefaults)]);
  const value = (set: Manifest, field: string) => JSON.stringify(normalize(set.spec[field] ?? statefulSetDefaults[field]));
  return [...fields].filter((field) => !mutableStatefulSetFields.has(field) && value(before, field) !== value(after, field)).sort();
}

/** Claim templates compare by what the API server keeps (names and specs), not by comments or key order. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)).map(([key, inner]) => [key, normalize(inner)]));
  return value;
}

/** The claims pod `ordinal` mounts: its templates' `<template>-<set>-<ordinal>` and the pod's own claim volumes. */
export function claimsOf(set: Manifest, ordinal: number): string[] {
  const fromTemplates = (set.spec.volumeClaimTemplates ?? []).map((template: Manifest) => `${template.metadata.name}-${set.metadata.name}-${ordinal}`);
  const fromVolumes = (set.spec.template.spec.volumes ?? []).filter((volume: Manifest) => volume.persistentVolumeClaim).map((volume: Manifest) => volume.persistentVolumeClaim.claimName);
  return [...fromTemplates, ...fromVolumes].sort();
}
