import type { ChatMessage } from '@rag/core';

/**
 * The one faithfulness rubric. Changing it changes every faithfulness number: say so in the report
 * that first uses the new wording. The verdict is JSON so it can be read without guessing.
 */
export const JUDGE_RUBRIC = [
  'You grade the faithfulness of an answer to the passages it was written from.',
  'Split the answer into its factual claims. A claim is supported when the passages state it or directly imply it;',
  'general knowledge that the passages do not contain does not count as support. Citation labels such as [docs/x.md#3] are not claims.',
  'An answer that only says the documents do not cover the question makes no claim and scores 1.',
  'faithfulness = supported claims / all claims, between 0 and 1.',
  'Reply with one JSON object and nothing else:',
  '{"faithfulness": <number 0..1>, "unsupported_claims": [<each unsupported claim, quoted briefly>], "reason": "<one sentence>"}',
].join('\n');

export function judgeMessages(question: string, passages: Array<{ label: string; text: string }>, answer: string): ChatMessage[] {
  const context = passages.map((passage) => `[${passage.label}]\n${passage.text}`).join('\n\n---\n\n');
  return [
    { role: 'system', content: JUDGE_RUBRIC },
    { role: 'user', content: `Passages:\n\n${context}\n\n---\n\nQuestion: ${question}\n\nAnswer to grade:\n${answer}` },
  ];
}

export interface JudgeVerdict {
  faithfulness: number;
  unsupportedClaims: string[];
  reason: string;
}

/** The first JSON object in the judge's reply (models like to wrap it in prose or a code fence). */
export function parseVerdict(reply: string): JudgeVerdict | undefined {
  const start = reply.indexOf('{');
  const end = reply.lastIndexOf('}');
  if (start === -1 || end <= start) return undefined;
  try {
    const value = JSON.parse(reply.slice(start, end + 1)) as Record<string, unknown>;
    const score = Number(value['faithfulness']);
    if (!Number.isFinite(score) || score < 0 || score > 1) return undefined;
    const claims = Array.isArray(value['unsupported_claims']) ? value['unsupported_claims'].map(String) : [];
    return { faithfulness: score, unsupportedClaims: claims, reason: typeof value['reason'] === 'string' ? value['reason'] : '' };
  } catch {
    return undefined;
  }
}
