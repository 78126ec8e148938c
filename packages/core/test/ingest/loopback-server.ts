import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A fake service on 127.0.0.1, on a port the system picks; subclasses answer as the real API does. */
export abstract class LoopbackServer {
  baseUrl = '';
  private readonly server = createServer((request, response) => void this.handle(request, response));

  protected abstract handle(request: IncomingMessage, response: ServerResponse): void | Promise<void>;

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
