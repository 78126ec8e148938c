# Two images from one workspace: `--target retrieval` (the API) and `--target ingest` (the CronJob).
#   docker build --target retrieval -t .../rag/retrieval:TAG .
#   docker build --target ingest    -t .../rag/ingest:TAG .
FROM node:20-bookworm-slim AS base
ENV PNPM_HOME=/pnpm PATH=/pnpm:$PATH
RUN npm install --global pnpm@9.15.9
WORKDIR /app

FROM base AS deps
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc tsconfig.base.json ./
COPY packages/core/package.json packages/core/
COPY services/retrieval/package.json services/retrieval/
COPY ingest/package.json ingest/
COPY eval/package.json eval/
# tsx (a dev dependency) runs the TypeScript sources directly: there is no build step.
RUN pnpm install --frozen-lockfile

FROM deps AS app
COPY packages packages
COPY services services
COPY ingest ingest
ENV NODE_ENV=production
USER node

FROM app AS retrieval
ENV HOST=0.0.0.0 PORT=8090
EXPOSE 8090
CMD ["pnpm", "exec", "tsx", "services/retrieval/src/server.ts"]

FROM app AS ingest
ENTRYPOINT ["pnpm", "exec", "tsx", "ingest/src/cli.ts"]
