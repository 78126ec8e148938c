import { describe, expect, it } from 'vitest';
import { type BuffersExceeded, isBuffersExceeded, watchBuffers } from '../../src/pipeline/buffer-watch.ts';

const MIB = 1024 * 1024;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the buffer watch of a conversion worker', () => {
  it('reports the first sample past the budget, once, with what was held; at the budget it is quiet', async () => {
    let held = 32 * MIB;
    const reports: BuffersExceeded[] = [];
    const stop = watchBuffers(32, (report) => reports.push(report), 5, () => held);
    await sleep(30);
    expect(reports).toEqual([]);
    held = 40 * MIB;
    await sleep(30);
    held = 80 * MIB;
    await sleep(30);
    stop();
    expect(reports).toEqual([{ buffersExceeded: { heldMb: 40, budgetMb: 32 } }]);
    expect(isBuffersExceeded(reports[0])).toBe(true);
  });

  it('stops sampling when told, and reads this thread’s memory outside the heap by default', async () => {
    let samples = 0;
    const stop = watchBuffers(1, () => {}, 5, () => (samples += 1));
    await sleep(30);
    stop();
    const seen = samples;
    await sleep(30);
    expect(seen).toBeGreaterThan(0);
    expect(samples).toBe(seen);
    const reports: BuffersExceeded[] = [];
    const held = new ArrayBuffer(24 * MIB);
    const stopDefault = watchBuffers(16, (report) => reports.push(report), 5);
    await sleep(30);
    stopDefault();
    expect(held.byteLength).toBe(24 * MIB);
    expect(reports[0]?.buffersExceeded.heldMb).toBeGreaterThanOrEqual(24);
  });

  it('tells a report from other events', () => {
    expect(isBuffersExceeded({ buffersExceeded: { heldMb: 1, budgetMb: 1 } })).toBe(true);
    expect(isBuffersExceeded({ progress: 1 })).toBe(false);
    expect(isBuffersExceeded(undefined)).toBe(false);
  });
});
