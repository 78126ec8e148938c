# Two production images from one workspace, both plain `node` running a compiled bundle:
#   docker build --target retrieval -t REGISTRY/rag/retrieval:VERSION .   (the API, dist/retrieval/server.js)
#   docker build --target ingest    -t REGISTRY/rag/ingest:VERSION .      (the CronJob, dist/ingest/cli.js)
# VERSION is the release, package.json's "version" (docs/releases.md): the tag the manifests name.
# They carry the production adapters (Qdrant, TEI, the gateway, GCS, docling-serve and the embedded
# converters) and no node_modules: the embedded LanceDB store and local ONNX models are for laptops
# (`pnpm start`) and answer RAG_ADAPTER_NOT_INSTALLED here. README.md gives their sizes.
#
# Node.js 26, the Active LTS. NODE_VERSION is what the digest below carries; `pnpm test:image-node` runs the
# whole test suite on that same version. The digest is the multi-arch index of node:26-bookworm-slim as Docker's
# official-images record lists it with ENV NODE_VERSION=26.6.0 (github.com/docker-library/repo-info,
# repos/node/remote/26-bookworm-slim.md at d45a2996); no registry is reachable from this repository's machines,
# so it was not pulled here. To move to a newer build, update both together:
#   docker buildx imagetools inspect node:26-bookworm-slim   (digest)   and   docker run --rm IMAGE node --version
ARG NODE_VERSION=26.6.0
ARG NODE_IMAGE=node:26-bookworm-slim@sha256:81502e860176e63695d769d3d1a2d3a403abc1c27c6a02169b765f3e43b60ede
ARG RUNTIME_IMAGE=debian:bookworm-slim@sha256:4b50eb66f977b4062683ff434ef18ac191da862dbe966961bc11990cf5791a8d
# The release the images are built from, recorded in their labels (k8s/test/release.test.ts keeps it equal to
# package.json's version).
ARG RAG_VERSION=1.0.0

FROM ${NODE_IMAGE} AS build
# The pnpm of package.json's packageManager.
RUN npm install --global pnpm@10.34.7
WORKDIR /src
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc tsconfig.base.json ./
COPY packages/core/package.json packages/core/
COPY services/retrieval/package.json services/retrieval/
COPY ingest/package.json ingest/
COPY eval/package.json eval/
COPY k8s/package.json k8s/
RUN pnpm install --frozen-lockfile
COPY scripts scripts
COPY packages/core/src packages/core/src
COPY services/retrieval/src services/retrieval/src
COPY ingest/src ingest/src
RUN pnpm build && find dist -name '*.map' -delete

# The Debian base of the official Node image, with the node binary alone: no npm, yarn or corepack
# in production, nothing installed at run time.
FROM ${RUNTIME_IMAGE} AS runtime
ARG RAG_VERSION
# OCI image annotations (github.com/opencontainers/image-spec, annotations.md): which release this image is.
LABEL org.opencontainers.image.title="rag-suite" org.opencontainers.image.version="${RAG_VERSION}"
COPY --from=build /usr/local/bin/node /usr/local/bin/node
WORKDIR /app
# Two glibc malloc arenas instead of 8 per core (mallopt(3) M_ARENA_MAX; glibc manual, "Memory Allocation
# Tunables"): LanceDB's native threads otherwise keep freed memory in arenas of their own, and the four
# Debian manuals' ingest peaked at 898 MiB instead of 734 MiB (bench/results.md, "Real documents").
ENV NODE_ENV=production MALLOC_ARENA_MAX=2
# A numeric id, so that Kubernetes' runAsNonRoot can verify it without an /etc/passwd entry. The app's
# files stay owned by root: the process cannot change its own code.
USER 10001:10001

FROM runtime AS retrieval
# A small young generation and a bounded old one keep the API near 130 MiB under load instead of
# letting V8 grow its heap to 300+ MiB before collecting (bench/results.md, "Runtime memory").
# No --enable-source-maps: it holds the parsed maps and doubles the RSS; the .map files are not shipped.
ENV HOST=0.0.0.0 PORT=8090 NODE_OPTIONS="--max-semi-space-size=2 --max-old-space-size=128"
COPY --from=build /src/dist/retrieval dist/retrieval
COPY --from=build /src/dist/web dist/web
EXPOSE 8090
# node is PID 1 and receives SIGTERM itself: the server drains in-flight requests, then exits 0.
ENTRYPOINT ["node", "dist/retrieval/server.js"]

FROM runtime AS ingest
COPY --from=build /src/dist/ingest dist/ingest
# The qdrant-backup CronJob runs this image with: node dist/backup/backup.js backup --to gs://…
COPY --from=build /src/dist/backup dist/backup
ENTRYPOINT ["node", "dist/ingest/cli.js"]
