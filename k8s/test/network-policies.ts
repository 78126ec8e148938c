/**
 * Network policies evaluated as Kubernetes evaluates them (https://kubernetes.io/docs/concepts/services-networking/network-policies/):
 * a connection is allowed when the destination's ingress and the source's egress both allow it; a pod that no
 * policy of a direction selects is open in that direction; the rules of all policies selecting a pod add up.
 * Pods are named by their `app` label, outside addresses by an IPv4 address matched against ipBlocks (cidr, except).
 */
import type { Manifest } from './render.ts';

export interface Peer {
  app?: string;
  namespace: string;
  ip?: string;
}

export const inRag = (app: string): Peer => ({ app, namespace: 'rag' });

function selects(selector: Manifest, peer: Peer): boolean {
  const labels = Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => (key === 'app' ? peer.app === value : false));
  // matchExpressions on the app label (In, NotIn); any other key matches no pod here, as an unknown label would not.
  const expressions = (selector?.matchExpressions ?? []).every((expression: Manifest) => {
    if (expression.key !== 'app') return false;
    if (expression.operator === 'In') return expression.values.includes(peer.app);
    if (expression.operator === 'NotIn') return !expression.values.includes(peer.app);
    return false;
  });
  return labels && expressions;
}

function namespaceMatches(selector: Manifest, peer: Peer): boolean {
  return Object.entries(selector?.matchLabels ?? {}).every(([key, value]) => key === 'kubernetes.io/metadata.name' && peer.namespace === value);
}

/** Whether an IPv4 address lies in an IPv4 CIDR block (an IPv6 one matches no address here). */
function inCidr(ip: string, cidr: string): boolean {
  const [base, bits] = cidr.split('/');
  if (ip.includes(':') || base!.includes(':')) return false;
  const value = (address: string) => address.split('.').reduce((total, octet) => total * 256 + Number(octet), 0);
  const size = 2 ** (32 - Number(bits ?? 32));
  return Math.floor(value(ip) / size) === Math.floor(value(base!) / size);
}

function peerMatches(rule: Manifest, peer: Peer): boolean {
  if (rule.ipBlock) return peer.ip !== undefined && inCidr(peer.ip, rule.ipBlock.cidr) && !(rule.ipBlock.except ?? []).some((cidr: string) => inCidr(peer.ip!, cidr));
  if (rule.namespaceSelector) return !peer.ip && namespaceMatches(rule.namespaceSelector, peer) && (!rule.podSelector || selects(rule.podSelector, peer));
  return peer.namespace === 'rag' && selects(rule.podSelector, peer);
}

function portMatches(ports: Manifest[] | undefined, port: number): boolean {
  return !ports || ports.some((candidate) => candidate.port === port);
}

export function networkOf(policies: Manifest[]): { allowed(from: Peer, to: Peer, port: number): boolean } {
  function allowedBy(direction: 'Ingress' | 'Egress', pod: Peer, other: Peer, port: number): boolean {
    if (pod.namespace !== 'rag') return true; // policies of other namespaces are not ours to check
    const selecting = policies.filter((policy) => policy.spec.policyTypes.includes(direction) && selects(policy.spec.podSelector, pod));
    if (selecting.length === 0) return true;
    const rules: Manifest[] = selecting.flatMap((policy) => (direction === 'Ingress' ? policy.spec.ingress : policy.spec.egress) ?? []);
    return rules.some((rule) => {
      const peers = direction === 'Ingress' ? rule.from : rule.to;
      return portMatches(rule.ports, port) && (!peers || peers.some((peer: Manifest) => peerMatches(peer, other)));
    });
  }
  return { allowed: (from, to, port) => allowedBy('Egress', from, to, port) && allowedBy('Ingress', to, from, port) };
}
