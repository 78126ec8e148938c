import type { SearchHit } from '../domain.ts';
import { readInstructions, type InstructionSignal } from './passage-instructions.ts';

/** SUSPECT_PASSAGES: passages written to the model (passage-instructions.ts) are kept out of the answer, or answered from. */
export type SuspectPassages = 'withhold' | 'off';

/** A passage /chat retrieved and did not answer from, with what it says to the model. */
export interface WithheldPassage {
  source: string;
  chunkIndex: number;
  headingPath: string;
  signals: InstructionSignal[];
}

/** The passages to answer from, in their order, and those withheld. With `off`, every passage is kept. */
export function withholdSuspectPassages(passages: readonly SearchHit[], mode: SuspectPassages): { kept: SearchHit[]; withheld: WithheldPassage[] } {
  if (mode === 'off') return { kept: [...passages], withheld: [] };
  const kept: SearchHit[] = [];
  const withheld: WithheldPassage[] = [];
  for (const hit of passages) {
    const reading = readInstructions(hit.text);
    if (reading.addressesTheModel) withheld.push({ source: hit.source, chunkIndex: hit.chunkIndex, headingPath: hit.headingPath, signals: reading.signals });
    else kept.push(hit);
  }
  return { kept, withheld };
}
