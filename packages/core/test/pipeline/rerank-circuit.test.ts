import { describe, expect, it } from 'vitest';
import { RagError } from '../../src/errors.ts';
import { RerankCircuit } from '../../src/pipeline/rerank-circuit.ts';

const INTERVAL_MS = 5_000;

function circuitWithClock() {
  let now = 0;
  const lines: Array<{ level: string; fields: Record<string, unknown> }> = [];
  const record = (level: string) => (fields: Record<string, unknown>) => void lines.push({ level, fields });
  const circuit = new RerankCircuit({ probeIntervalMs: INTERVAL_MS, logger: { warn: record('warn'), info: record('info') } as never, now: () => now });
  return { circuit, lines, advance: (ms: number) => (now += ms) };
}

const unavailable = new RagError('RAG_RERANK_UNAVAILABLE');

describe('the reranker circuit', () => {
  it('lets every request call a reranker that is up', () => {
    const { circuit } = circuitWithClock();
    expect([circuit.admit(), circuit.admit()]).toEqual(['call', 'call']);
    expect(circuit.isOpen).toBe(false);
  });

  it('opens on a failure: requests skip the reranker until one probe per interval tries it', () => {
    const { circuit, lines, advance } = circuitWithClock();
    circuit.failed(circuit.admit(), unavailable);
    expect([circuit.isOpen, circuit.outageCode]).toEqual([true, 'RAG_RERANK_UNAVAILABLE']);
    expect(circuit.admit()).toBe('skip');
    advance(INTERVAL_MS);
    expect(circuit.admit()).toBe('probe');
    expect(circuit.admit()).toBe('skip'); // one probe at a time
    circuit.failed('probe', new RagError('RAG_RERANK_TIMEOUT'));
    expect(circuit.outageCode).toBe('RAG_RERANK_TIMEOUT');
    expect(circuit.admit()).toBe('skip'); // the next probe is an interval after the failed one
    advance(INTERVAL_MS);
    expect(circuit.admit()).toBe('probe');
    expect(lines.map((line) => line.level)).toEqual(['warn']);
  });

  it('closes on the first successful probe, with one info line counting the fallbacks', () => {
    const { circuit, lines, advance } = circuitWithClock();
    circuit.failed(circuit.admit(), unavailable);
    circuit.countFallback();
    circuit.countFallback();
    advance(INTERVAL_MS);
    circuit.succeeded(circuit.admit());
    expect(circuit.isOpen).toBe(false);
    expect(circuit.admit()).toBe('call');
    expect(lines).toEqual([
      { level: 'warn', fields: expect.objectContaining({ code: 'RAG_RERANK_UNAVAILABLE' }) },
      { level: 'info', fields: { dependency: 'rerank', downSeconds: 5, fallbacks: 2 } },
    ]);
  });

  it('is not closed by a call that started before the outage, nor blocked by a probe whose client went away', () => {
    const { circuit, advance } = circuitWithClock();
    const early = circuit.admit();
    circuit.failed(circuit.admit(), unavailable);
    circuit.succeeded(early);
    expect(circuit.isOpen).toBe(true);
    advance(INTERVAL_MS);
    circuit.abandoned(circuit.admit());
    expect(circuit.admit()).toBe('probe');
  });
});
