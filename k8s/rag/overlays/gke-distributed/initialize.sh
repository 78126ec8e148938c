#!/bin/sh
# Peer 0 starts the cluster; peer N joins it. Each announces its stable name on the headless Service.
SET_INDEX=${HOSTNAME##*-}
PEERS=qdrant-headless.rag.svc.cluster.local
if [ "$SET_INDEX" = "0" ]; then
  exec ./entrypoint.sh --uri "http://qdrant-0.$PEERS:6335"
else
  exec ./entrypoint.sh --bootstrap "http://qdrant-0.$PEERS:6335" --uri "http://qdrant-$SET_INDEX.$PEERS:6335"
fi
