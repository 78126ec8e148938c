import type { Grounding } from '@rag/core';
import { z } from 'zod';

/**
 * The grounding check of a generated answer (packages/core/src/answer-check) as every interface shows it:
 * /chat (JSON and the stream's `done`), /v1/chat/completions (`rag.grounding` and the last chunk), MCP `ask`.
 */
export const groundingSchema = z
  .object({
    grounded: z.boolean().describe('false when at least one sentence is supported by no passage given'),
    threshold: z.number().describe('the share of a sentence\'s content words a passage must hold to support it'),
    sentences: z.array(
      z.object({
        text: z.string(),
        status: z
          .enum(['supported', 'miscited', 'attributed', 'unsupported', 'no_claim'])
          .describe('supported: by a passage it cites; miscited: not by the passages it cites, by another one given; attributed: it cites nothing, a passage given supports it; unsupported: no passage given supports it; no_claim: too short, or says the documents do not cover it'),
        cited: z.array(z.string()).describe('source#chunk_index of each passage the sentence cites'),
        supported_by: z.string().optional().describe('source#chunk_index of the passage that supports it best'),
        support: z.number().describe('best share of its content words held by a passage it cites (by any passage when it cites none)'),
      }),
    ),
    unsupported: z.number().int(),
    miscited: z.number().int(),
    attributed: z.number().int(),
  })
  .describe('generated answers only: each sentence checked against the passages (lexical overlap, docs/api.md#grounding)');

export function groundingJson(grounding: Grounding): z.infer<typeof groundingSchema> {
  return {
    grounded: grounding.grounded,
    threshold: grounding.threshold,
    sentences: grounding.sentences.map((sentence) => ({
      text: sentence.text,
      status: sentence.status,
      cited: sentence.cited,
      ...(sentence.supportedBy === undefined ? {} : { supported_by: sentence.supportedBy }),
      support: Math.round(sentence.support * 1000) / 1000,
    })),
    unsupported: grounding.counts.unsupported,
    miscited: grounding.counts.miscited,
    attributed: grounding.counts.attributed,
  };
}

/** The field, present only for a checked answer. */
export function groundingField(grounding: Grounding | undefined): { grounding?: z.infer<typeof groundingSchema> } {
  return grounding ? { grounding: groundingJson(grounding) } : {};
}
