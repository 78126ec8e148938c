/**
 * Every rendered object checked against its schema: Kubernetes' own kinds with kubernetes-models (the API's OpenAPI
 * schemas), so a misspelt field or a wrong type fails before anything reaches a cluster.
 */
import type { Manifest } from './render.ts';

/** Kinds of other APIs (GKE's, Argo CD's, External Secrets', the Secrets Store CSI driver's, the Prometheus Operator's) that kubernetes-models has no schema for. */
const otherApis = /^(cloud\.google\.com|networking\.gke\.io|argoproj\.io|external-secrets\.io|secrets-store\.csi\.x-k8s\.io|monitoring\.coreos\.com)\//;

export async function schemaErrors(objects: Manifest[]): Promise<string[]> {
  const errors: string[] = [];
  for (const object of objects) {
    if (otherApis.test(object.apiVersion)) continue;
    try {
      const module = await import(`kubernetes-models/${object.apiVersion}/${object.kind}`);
      new module[object.kind](object).validate();
    } catch (error) {
      errors.push(`${object.kind}/${object.metadata?.name}: ${(error as Error).message}`);
    }
  }
  return errors;
}
