import { describe, expect, it } from 'vitest';
import { answerSentences } from '../../src/answer-check/answer-sentences.ts';
import { checkGrounding } from '../../src/answer-check/grounding.ts';
import type { SearchHit } from '../../src/domain.ts';

function hit(source: string, chunkIndex: number, body: string): SearchHit {
  return { id: `${source}#${chunkIndex}`, source, headingPath: '', chunkIndex, text: `${source}\n\n${body}`, score: 1, fusionScore: 1 };
}

const backups = hit('handbook/backups.md', 2, 'Nightly snapshots of every database are kept for thirty days in the eu-west bucket, then deleted.');
const vpn = hit('it/vpn.md', 0, 'The VPN client must be updated to version 4.2 before March; older clients are refused by the gateway.');
const passages = [backups, vpn];

describe('answer sentences', () => {
  it('splits lines and sentences, keeps each sentence its citations, and moves a citation after the full stop back', () => {
    const sentences = answerSentences('Snapshots are kept thirty days [P1]. Old VPN clients are refused. [P2]\n- Update to 4.2 [it/vpn.md#0]', (label) => ['P1', 'P2', 'it/vpn.md#0'].includes(label));
    expect(sentences.map(({ claim, labels }) => ({ claim, labels }))).toEqual([
      { claim: 'Snapshots are kept thirty days.', labels: ['P1'] },
      { claim: 'Old VPN clients are refused.', labels: ['P2'] },
      { claim: 'Update to 4.2', labels: ['it/vpn.md#0'] },
    ]);
  });

  it('leaves fenced code out and keeps a bracket that is not a citation as text', () => {
    const sentences = answerSentences('Run this:\n```sh\nrm -rf [all]\n```\nSee [the guide] for more.', () => false);
    expect(sentences.map(({ claim }) => claim)).toEqual(['Run this:', 'See [the guide] for more.']);
  });
});

describe('grounding of an answer', () => {
  it('a sentence drawn from the passage it cites is supported, and the answer grounded', () => {
    const grounding = checkGrounding('Nightly database snapshots are kept for thirty days [P1].', passages);
    expect(grounding.grounded).toBe(true);
    expect(grounding.sentences[0]).toMatchObject({ status: 'supported', cited: ['handbook/backups.md#2'], supportedBy: 'handbook/backups.md#2' });
  });

  it('an added fact no passage holds is unsupported, and the answer is not grounded', () => {
    const grounding = checkGrounding('Snapshots are kept thirty days [P1]. Restores are requested through the ServiceNow portal by the on-call engineer [P1].', passages);
    expect(grounding.grounded).toBe(false);
    expect(grounding.sentences.map(({ status }) => status)).toEqual(['supported', 'unsupported']);
    expect(grounding.counts.unsupported).toBe(1);
  });

  it('an uncited sentence is attributed to the passage that supports it', () => {
    const grounding = checkGrounding('Older VPN clients are refused by the gateway; update the client to version 4.2.', passages);
    expect(grounding.sentences[0]).toMatchObject({ status: 'attributed', cited: [], supportedBy: 'it/vpn.md#0' });
    expect(grounding.grounded).toBe(true);
  });

  it('a sentence citing the wrong passage is miscited and names the one that supports it', () => {
    const grounding = checkGrounding('The VPN client must be updated to version 4.2 [handbook/backups.md#2].', passages);
    expect(grounding.sentences[0]).toMatchObject({ status: 'miscited', cited: ['handbook/backups.md#2'], supportedBy: 'it/vpn.md#0' });
  });

  it('a refusal and a short reply make no claim', () => {
    const grounding = checkGrounding('Yes. The documents do not cover the cafeteria menu.', passages);
    expect(grounding.sentences.map(({ status }) => status)).toEqual(['no_claim', 'no_claim']);
    expect(grounding.grounded).toBe(true);
  });

  it('compares stems in the collection language', () => {
    const french = hit('faq.md', 0, 'Les sauvegardes sont conservées trente jours.');
    expect(checkGrounding('Les sauvegardes sont conservées pendant trente jours [P1].', [french], 'french').sentences[0]!.status).toBe('supported');
  });
});
