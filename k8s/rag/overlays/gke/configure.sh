#!/usr/bin/env bash
# Writes one installation's values into this overlay (runbook step 6): the image registry and tag, the
# bucket, the gateway and the Workload Identity binding. Reads PROJECT_ID, REGION, BUCKET and TAG (set at
# the top of the runbook; TAG defaults to the release's version, package.json "version", the tag step 4
# builds) and GATEWAY_URL (found in step 5; empty: /chat answers extractively). Safe to
# run again with other values: it rewrites the lines by key, not placeholders.
set -euo pipefail
: "${PROJECT_ID:?set PROJECT_ID (runbook, top)}" "${REGION:?set REGION}" "${BUCKET:?set BUCKET}"
root="$(cd "$(dirname "$0")/../../../.." && pwd)"
TAG="${TAG:-$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$root/package.json" 2>/dev/null || true)}"
: "${TAG:?set TAG (no version found in package.json)}"
GATEWAY_URL="${GATEWAY_URL-}"
# The gateway's namespace, for the egress policy (gateway-egress): GATEWAY_NAMESPACE, else the second label of a
# cluster-local GATEWAY_URL (http://<service>.<namespace>.svc.cluster.local:80), else the seed's envoy-gateway-system.
gateway_host="$(printf %s "$GATEWAY_URL" | sed -n 's#^[a-z]*://\([^/:]*\).*#\1#p')"
case "$gateway_host" in
  *.*.svc|*.*.svc.*) derived_namespace="$(printf %s "$gateway_host" | cut -d. -f2)" ;;
  *) derived_namespace=envoy-gateway-system ;;
esac
GATEWAY_NAMESPACE="${GATEWAY_NAMESPACE:-$derived_namespace}"
file="$(cd "$(dirname "$0")" && pwd)/kustomization.yaml"
registry="$REGION-docker.pkg.dev/$PROJECT_ID/rag"
sed -e "s#^\(    newName: \).*/rag/retrieval\$#\1$registry/retrieval#" \
    -e "s#^\(    newName: \).*/rag/ingest\$#\1$registry/ingest#" \
    -e "s#^\(    newTag: \).*\$#\1\"$TAG\"#" \
    -e "s#^\(      - GCS_BUCKET=\).*\$#\1$BUCKET#" \
    -e "s#^\(      - GATEWAY_URL=\).*\$#\1$GATEWAY_URL#" \
    -e "s#^\(      - {op: replace, path: /spec/egress/0/to/0/namespaceSelector/matchLabels/kubernetes.io~1metadata.name, value: \).*}\$#\1$GATEWAY_NAMESPACE}#" \
    -e "s#^\(      - [A-Z]*_GCP_SERVICE_ACCOUNT=rag-[a-z]*-sa@\).*\$#\1$PROJECT_ID.iam.gserviceaccount.com#" \
    -e "s#^\(      - BACKUP_LOCATION=gs://\).*\(-backups/qdrant-snapshots/\)\$#\1$BUCKET\2#" \
    "$file" > "$file.new"
mv "$file.new" "$file"
if grep -n 'YOUR_[A-Z_]*[^*]' "$file" | grep -v '^[0-9]*:#'; then echo "configure.sh: placeholders left in $file" >&2; exit 1; fi
echo "configured: images $registry/{retrieval,ingest}:$TAG, bucket gs://$BUCKET, gateway ${GATEWAY_URL:-none (extractive /chat)} (egress to namespace $GATEWAY_NAMESPACE)"
