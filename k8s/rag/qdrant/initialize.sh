#!/bin/sh
# Qdrant's own start script for a cluster (the qdrant/qdrant Helm chart's initialize.sh, templates/configmap.yaml):
# peer 0 starts the cluster, peer N bootstraps from peer 0, each announcing its stable name. That name is the
# pod's own DNS record, <pod>.<serviceName>.<namespace>.svc.cluster.local, which exists only because the
# StatefulSet's serviceName is the headless Service qdrant-headless (qdrant.yaml; k8s/test/qdrant-peers.test.ts
# derives it from the StatefulSet and checks the Service).
SET_INDEX=${HOSTNAME##*-}
PEERS=qdrant-headless.rag.svc.cluster.local
if [ "$SET_INDEX" = "0" ]; then
  exec ./entrypoint.sh --uri "http://qdrant-0.$PEERS:6335"
else
  exec ./entrypoint.sh --bootstrap "http://qdrant-0.$PEERS:6335" --uri "http://qdrant-$SET_INDEX.$PEERS:6335"
fi
