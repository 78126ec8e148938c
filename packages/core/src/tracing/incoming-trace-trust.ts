import { BlockList, isIP } from 'node:net';

/**
 * TRACE_TRUST_INCOMING: whose W3C trace context the API continues. `none` (the default): nobody's, every
 * request starts a new trace; `all`: every caller's; otherwise a comma-separated list of the peer
 * addresses or CIDR ranges of the proxies in front (`10.0.0.0/8,2001:db8::/32`). The peer is the socket's
 * remote address, never a forwarded header, which any client can write.
 */
export interface IncomingTraceTrust {
  trusts(peerAddress: string | undefined): boolean;
}

export const TRUST_NO_CALLER: IncomingTraceTrust = { trusts: () => false };
const TRUST_EVERY_CALLER: IncomingTraceTrust = { trusts: () => true };

/** The parsed setting; throws a message naming the entry that is neither an address nor a CIDR range. */
export function parseIncomingTraceTrust(setting: string): IncomingTraceTrust {
  const text = setting.trim().toLowerCase();
  if (text === '' || text === 'none') return TRUST_NO_CALLER;
  if (text === 'all') return TRUST_EVERY_CALLER;
  const peers = new BlockList();
  for (const entry of text.split(',').map((part) => part.trim()).filter(Boolean)) addPeer(peers, entry);
  return { trusts: (peerAddress) => peerAddress !== undefined && checkPeer(peers, peerAddress) };
}

function addPeer(peers: BlockList, entry: string): void {
  const [address = '', prefixText, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) throw new Error(`"${entry}" is not an IP address or CIDR range (expected none, all, or e.g. 10.0.0.0/8,::1)`);
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (prefixText === undefined) return peers.addAddress(address, type);
  const prefix = Number(prefixText);
  if (!/^\d+$/.test(prefixText) || prefix > (family === 4 ? 32 : 128)) throw new Error(`"${entry}" has an invalid prefix length`);
  peers.addSubnet(address, prefix, type);
}

/** A dual-stack socket reports an IPv4 peer as `::ffff:a.b.c.d`: checked as the IPv4 address it is. */
function checkPeer(peers: BlockList, peerAddress: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peerAddress);
  const address = mapped ? mapped[1]! : peerAddress;
  const family = isIP(address);
  if (family === 0) return false;
  return peers.check(address, family === 4 ? 'ipv4' : 'ipv6');
}
