/**
 * Puts a fake dependency into one of the failure modes the fault tests need, and back to healthy,
 * without changing its URL (the app under test keeps the same adapters):
 * - refuse: the server stops listening, so connecting is refused (ECONNREFUSED); healthy listens again on the same port;
 * - hang: requests are read and never answered;
 * - error500: the service's own 500 error body;
 * - garbage: a 200 whose body is not JSON.
 */
import type { ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hang, startFakeServer, type FakeServer, type Handler, type RecordedRequest } from '../../../../packages/core/test/adapters/fake-server.ts';

export type Fault = 'refuse' | 'hang' | 'error500' | 'garbage';

export class SwitchableServer {
  private fault: Fault | undefined;

  private constructor(
    readonly fake: FakeServer,
    private readonly port: number,
  ) {}

  /** `serverError` writes the dependency's documented 500 answer. */
  static async start(healthy: Handler, serverError: (response: ServerResponse) => void): Promise<SwitchableServer> {
    let switchable!: SwitchableServer;
    const fake = await startFakeServer((request: RecordedRequest, response: ServerResponse) => switchable.answer(request, response, healthy, serverError));
    switchable = new SwitchableServer(fake, (fake.server.address() as AddressInfo).port);
    return switchable;
  }

  get url(): string {
    return this.fake.url;
  }

  async fail(fault: Fault): Promise<void> {
    this.fault = fault;
    if (fault === 'refuse') await this.stopListening();
  }

  async heal(): Promise<void> {
    const wasRefusing = this.fault === 'refuse';
    this.fault = undefined;
    if (wasRefusing) await new Promise<void>((resolve) => this.fake.server.listen(this.port, '127.0.0.1', resolve));
    else this.fake.server.closeAllConnections(); // ends the requests left hanging
  }

  private answer(request: RecordedRequest, response: ServerResponse, healthy: Handler, serverError: (response: ServerResponse) => void) {
    if (this.fault === 'hang') return hang();
    if (this.fault === 'error500') return serverError(response);
    if (this.fault === 'garbage') return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"oops": ');
    return healthy(request, response);
  }

  private stopListening(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.fake.server.closeAllConnections();
      this.fake.server.close(() => resolve());
    });
  }
}
