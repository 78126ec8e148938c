import { describe, expect, it } from 'vitest';
import { answerSentences } from '../../src/answer-check/answer-sentences.ts';
import { checkGrounding } from '../../src/answer-check/grounding.ts';
import { UNSUPPORTED_MARK } from '../../src/answer-check/unsupported-mark.ts';
import { verifyAnswer, type UnsupportedClaims } from '../../src/answer-check/verified-answer.ts';
import { VerifiedStream } from '../../src/answer-check/verified-stream.ts';
import { passagesByLabel, rewritePromptLabels } from '../../src/chat/citations.ts';
import type { SearchHit } from '../../src/domain.ts';

function hit(source: string, chunkIndex: number, body: string): SearchHit {
  return { id: `${source}#${chunkIndex}`, source, headingPath: '', chunkIndex, text: `${source}\n\n${body}`, score: 1, fusionScore: 1 };
}

const backups = hit('handbook/backups.md', 2, 'Nightly snapshots of every database are kept for thirty days in the eu-west bucket, then deleted.');
const vpn = hit('it/vpn.md', 0, 'The VPN client must be updated to version 4.2 before March; older clients are refused by the gateway.');
const passages = [backups, vpn];
const byLabel = passagesByLabel(passages);
const isKnown = (label: string) => byLabel.has(label);

/** The answer as shown: verified, prompt labels written as source#n. */
function shown(modelText: string, unsupportedClaims: UnsupportedClaims = 'mark'): string {
  return rewritePromptLabels(verifyAnswer(modelText, checkGrounding(modelText, passages), unsupportedClaims, isKnown).text, byLabel);
}

describe('the verified answer', () => {
  it('keeps a supported sentence as written', () => {
    expect(shown('Nightly snapshots are kept for thirty days [P1].')).toBe('Nightly snapshots are kept for thirty days [handbook/backups.md#2].');
  });

  it('cites the passage that supports a sentence the model left uncited, before its full stop', () => {
    expect(shown('Nightly snapshots are kept for thirty days.')).toBe('Nightly snapshots are kept for thirty days [handbook/backups.md#2].');
  });

  it('never cuts a URL with a citation', () => {
    expect(shown('The VPN client must be updated from https://it.example/vpn?')).toBe('The VPN client must be updated from https://it.example/vpn? [it/vpn.md#0]');
  });

  it('never puts a citation inside a code span', () => {
    expect(shown('The VPN client must be updated with `vpn-update --to 4.2.`')).toBe('The VPN client must be updated with `vpn-update --to 4.2.` [it/vpn.md#0]');
  });

  it('weighs what a sentence adds to the question it answers, not the question it restates', () => {
    const modelText = 'Snapshots of every database are kept in the eu-west bucket.';
    const question = 'Where are the nightly database snapshots of the company kept, and in which region of the cloud provider?';
    expect(checkGrounding(modelText, passages, undefined, question).sentences[0]!.status).toBe('attributed');
    const restated = 'The nightly snapshots of the company are kept in a region of the cloud provider.';
    expect(checkGrounding(restated, passages, undefined, question).sentences[0]!.status).toBe('no_claim');
    const wrong = 'The nightly database snapshots are kept in the us-east bucket.';
    expect(checkGrounding(wrong, passages, undefined, question).sentences[0]!.status).toBe('unsupported');
  });

  it('replaces the citations of a miscited sentence with the passage that supports it', () => {
    expect(shown('Older VPN clients are refused by the gateway [P1].')).toBe('Older VPN clients are refused by the gateway [it/vpn.md#0].');
  });

  it('takes away a citation that does not support a sentence beside one that does, and keeps both when both do', () => {
    expect(shown('Nightly snapshots are kept for thirty days [P1][P2].')).toBe('Nightly snapshots are kept for thirty days [handbook/backups.md#2].');
    expect(shown('Nightly snapshots are kept for thirty days [P2, P1].')).toBe('Nightly snapshots are kept for thirty days [handbook/backups.md#2].');
    const twice = [backups, hit('handbook/retention.md', 0, 'Nightly snapshots are kept for thirty days.')];
    const twiceByLabel = passagesByLabel(twice);
    const modelText = 'Nightly snapshots are kept for thirty days [P1][P2].';
    const verified = verifyAnswer(modelText, checkGrounding(modelText, twice), 'mark', (label) => twiceByLabel.has(label));
    expect(verified.text).toBe(modelText);
  });

  it('marks a sentence no passage supports, and takes its citations away, invented ones too', () => {
    expect(shown('Snapshots are kept thirty days [P1]. The canteen serves lunch at noon [P2][made-up.md#4].')).toBe(
      `Snapshots are kept thirty days [handbook/backups.md#2]. The canteen serves lunch at noon ${UNSUPPORTED_MARK}.`,
    );
  });

  it('leaves it out with UNSUPPORTED_CLAIMS=drop, list item and all, and counts it', () => {
    const modelText = 'Two things:\n- The VPN client must be updated to 4.2 [P2].\n- The canteen serves lunch at noon [P1].\n- Snapshots are deleted after thirty days.';
    const verified = verifyAnswer(modelText, checkGrounding(modelText, passages), 'drop', isKnown);
    expect(verified).toEqual({
      text: 'Two things:\n- The VPN client must be updated to 4.2 [P2].\n- Snapshots are deleted after thirty days [handbook/backups.md#2].',
      dropped: 1,
      noSupportedClaim: false,
    });
  });

  it('drops a sentence in the middle of a line with the space after it', () => {
    const modelText = 'The canteen serves lunch at noon. Older VPN clients are refused [P2].';
    expect(verifyAnswer(modelText, checkGrounding(modelText, passages), 'drop', isKnown).text).toBe('Older VPN clients are refused [P2].');
  });

  it('says when no claim of the answer is supported: all unsupported, or none made', () => {
    const modelText = 'The canteen serves lunch at noon [P1]. Parking is free on Fridays.';
    expect(verifyAnswer(modelText, checkGrounding(modelText, passages), 'mark', isKnown).noSupportedClaim).toBe(true);
    const leadIn = 'To update the VPN client, follow these steps [P2]:';
    expect(verifyAnswer(leadIn, checkGrounding(leadIn, passages), 'mark', isKnown).noSupportedClaim).toBe(true);
    const supported = 'Yes. Older VPN clients are refused by the gateway [P2].';
    expect(verifyAnswer(supported, checkGrounding(supported, passages), 'mark', isKnown).noSupportedClaim).toBe(false);
  });

  it('leaves code and sentences making no claim as they are', () => {
    const modelText = 'Yes.\n```sh\nvpn-update --to 4.2\n```\nThe VPN client must be updated to 4.2 [P2].';
    expect(shown(modelText)).toBe('Yes.\n```sh\nvpn-update --to 4.2\n```\nThe VPN client must be updated to 4.2 [it/vpn.md#0].');
  });

  it('reads its own mark as no part of the claim, and does not mark twice', () => {
    const once = shown('The canteen serves lunch at noon.');
    expect(shown(once)).toBe(once);
    const [sentence] = answerSentences(once, isKnown);
    expect(sentence).toMatchObject({ claim: 'The canteen serves lunch at noon.', marked: true });
  });
});

describe('the verified stream', () => {
  const modelText = 'Nightly snapshots are kept for thirty days. [P1] The canteen serves lunch at noon [P2]. Older clients are refused [P1].';

  function streamed(pieceLength: number): { pieces: string[]; sent: string; final: string } {
    const stream = new VerifiedStream(passages, 'mark', undefined);
    const pieces: string[] = [];
    for (const token of modelText.match(new RegExp(`[\\s\\S]{1,${pieceLength}}`, 'g'))!) pieces.push(stream.push(token));
    const final = shown(stream.text);
    pieces.push(stream.finish(final));
    return { pieces, sent: pieces.join(''), final };
  }

  it('sends, cut anywhere, exactly the verified answer, a sentence at a time', () => {
    for (const length of [1, 2, 3, 7, 200]) {
      const { sent, final } = streamed(length);
      expect(sent, `pieces of ${length}`).toBe(final);
    }
    expect(streamed(1).final).toBe(
      `Nightly snapshots are kept for thirty days. [handbook/backups.md#2] The canteen serves lunch at noon ${UNSUPPORTED_MARK}. Older clients are refused [it/vpn.md#0].`,
    );
  });

  it('holds a sentence until the next one begins, so a citation after its full stop stays its own', () => {
    const { pieces } = streamed(1);
    const first = pieces.findIndex((piece) => piece !== '');
    expect(pieces[first]).toBe('Nightly snapshots are kept for thirty days. [handbook/backups.md#2]');
    expect(modelText.slice(0, first + 1)).toBe('Nightly snapshots are kept for thirty days. [P1] T');
  });

  it('sends nothing before a supported sentence, so an answer without one has nothing to take back', () => {
    const stream = new VerifiedStream(passages, 'mark', undefined);
    const pieces = ['The canteen ', 'serves lunch. ', 'Parking is free', '.'].map((token) => stream.push(token));
    expect(pieces.join('')).toBe('');
  });
});
