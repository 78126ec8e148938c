import { once } from 'node:events';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePorts, type HeldPort } from './free-ports.ts';

/** Ports handed out as a system may: the lowest one nobody holds, so a port just released comes back at once. */
function lowestFreePort(): () => Promise<HeldPort> {
  const inUse = new Set<number>();
  return async () => {
    let port = 40_000;
    while (inUse.has(port)) port++;
    inUse.add(port);
    return { port, release: async () => void inUse.delete(port) };
  };
}

describe('freePorts', () => {
  it('gives distinct ports even where the system hands a released port straight back', async () => {
    expect(await freePorts(3, [], lowestFreePort())).toEqual([40_000, 40_001, 40_002]);
  });

  it('skips the ports it was told to avoid', async () => {
    expect(await freePorts(2, [40_000, 40_002], lowestFreePort())).toEqual([40_001, 40_003]);
  });

  it('releases every port it drew, the avoided ones too', async () => {
    const hold = lowestFreePort();
    await freePorts(2, [40_000], hold);
    expect((await hold()).port).toBe(40_000);
  });

  it('on this machine: distinct ports that can be bound afterwards', async () => {
    const ports = await freePorts(4);
    expect(new Set(ports).size).toBe(4);
    const servers = ports.map((port) => createServer().listen(port, '127.0.0.1'));
    await Promise.all(servers.map((server) => once(server, 'listening')));
    await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  });
});
