import { once } from 'node:events';
import { connect, createServer } from 'node:net';

/** A listening socket on a port the system chose, and how to release it. */
export interface HeldPort {
  port: number;
  release(): Promise<void>;
}

async function holdAnyPort(): Promise<HeldPort> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * `count` distinct ports nobody listens on right now, none of them in `avoid`. Every port is held open until all are
 * drawn, then released: drawing them one at a time (bind to 0, release, bind to 0 again) can give the same port twice,
 * which made Envoy's listener and admin interface collide in a CI run ("cannot bind '127.0.0.1:42219': Address
 * already in use", listener 42219, admin 42219). For servers that cannot listen on port 0 and report the port.
 */
export async function freePorts(count: number, avoid: readonly number[] = [], hold: () => Promise<HeldPort> = holdAnyPort): Promise<number[]> {
  const held: HeldPort[] = [];
  try {
    while (held.filter((entry) => !avoid.includes(entry.port)).length < count) {
      if (held.length >= count + avoid.length) throw new Error(`no ${count} free ports outside ${avoid.join(', ')}: drew ${held.map((entry) => entry.port).join(', ')}`);
      held.push(await hold());
    }
    return held.map((entry) => entry.port).filter((port) => !avoid.includes(port));
  } finally {
    await Promise.all(held.map((entry) => entry.release()));
  }
}

/** One port nobody listens on right now, not in `avoid`. */
export async function freePort(avoid: readonly number[] = []): Promise<number> {
  const [port] = await freePorts(1, avoid);
  return port!;
}

/** What a connection to 127.0.0.1:`port` meets now: a listener, a refusal, or another error (its code). */
export function probePort(port: number): Promise<'open' | string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('open');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
  });
}
