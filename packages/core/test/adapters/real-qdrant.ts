/**
 * Where a test finds a real Qdrant, in order: QDRANT_URL (and QDRANT_API_KEY when the server needs one);
 * a container started by testcontainers when a Docker or Podman socket is found; otherwise none, with the
 * reason to print. Deciding only looks at environment variables and socket files, so a skip costs nothing.
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The server version the client (@qdrant/js-client-rest 1.17.0) is built for; CI pins the same tag. */
export const QDRANT_IMAGE = 'qdrant/qdrant:v1.17.0';

export interface RealQdrant {
  url: string;
  apiKey: string | undefined;
  stop(): Promise<void>;
}

function containerRuntimeSocket(): string | undefined {
  if (process.env.DOCKER_HOST) return process.env.DOCKER_HOST;
  const candidates = [
    process.env.TESTCONTAINERS_DOCKER_SOCKET_OVERRIDE,
    '/var/run/docker.sock',
    join(homedir(), '.docker/run/docker.sock'),
    join(homedir(), '.docker/desktop/docker.sock'),
    process.env.XDG_RUNTIME_DIR && join(process.env.XDG_RUNTIME_DIR, 'podman/podman.sock'),
    '/run/podman/podman.sock',
  ];
  return candidates.find((path): path is string => Boolean(path) && existsSync(path as string));
}

/** Why a suite needing Qdrant cannot run here, or undefined when it can. */
export function realQdrantSkipReason(suite: string): string | undefined {
  if (process.env.QDRANT_URL || containerRuntimeSocket()) return undefined;
  return (
    `${suite} skipped: no Qdrant to test against. Set QDRANT_URL (and QDRANT_API_KEY if needed) to a running Qdrant ≥ 1.16, ` +
    `or run a Docker/Podman engine so testcontainers can start ${QDRANT_IMAGE}.`
  );
}

/** QDRANT_URL's server, or a fresh container (call within a hook of a few minutes: the first pull takes a while). */
export async function startRealQdrant(): Promise<RealQdrant> {
  const apiKey = process.env.QDRANT_API_KEY || undefined;
  if (process.env.QDRANT_URL) return { url: process.env.QDRANT_URL, apiKey, stop: async () => undefined };
  const { GenericContainer, Wait } = await import('testcontainers');
  const container = await new GenericContainer(QDRANT_IMAGE).withExposedPorts(6333).withWaitStrategy(Wait.forHttp('/readyz', 6333)).start();
  return { url: `http://${container.getHost()}:${container.getMappedPort(6333)}`, apiKey: undefined, stop: async () => void (await container.stop()) };
}
