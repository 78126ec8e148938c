/**
 * Text in a passage that is written to the model that answers rather than to a reader: an order to
 * drop its rules, a forged passage fence or citation label, a chat template's control tokens, a
 * request for its prompt, or directions about what its answer must say. The prompt's fences and rules
 * already quote such text as data (prompt.ts), but a 1.5B model still obeys it now and then
 * (eval/reports/poisoned-documents.md), and the answer check cannot catch it: the injected sentence is
 * supported, by the poisoned passage itself. So /chat withholds such passages from the answer
 * (SUSPECT_PASSAGES, pipeline/answer.ts) and says which it withheld.
 *
 * Documentation rarely speaks to an assistant. A strong signal alone marks a passage; the weak ones,
 * each of which a tutorial may use ("tell the user", "your answer"), mark it only when two of them meet.
 * How often each fires on published manuals and on a public attack set is in
 * eval/reports/passage-instructions.md.
 */

export type InstructionSignal =
  | 'overrides its instructions'
  | 'forges a passage fence'
  | 'forges a citation label'
  | 'carries chat control tokens'
  | 'asks for the prompt'
  | 'addresses the assistant'
  | 'directs the answer'
  | 'speaks to the answerer';

interface Rule {
  signal: InstructionSignal;
  strong: boolean;
  pattern: RegExp;
}

const RULES: readonly Rule[] = [
  {
    signal: 'overrides its instructions',
    strong: true,
    // "ignore all previous instructions", "disregard the rules you were given", "forget your guidelines"
    // At least one word between verb and object: "ignore rules" is a noun ("Argo CD's ignore rules"), "ignore all rules" an order.
    pattern: /\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|my|these|those|of|previous|prior|above|earlier|preceding|original|system|safety)\s+){1,4}(?:instructions|rules|prompts?|guidelines|directives)\b/i,
  },
  { signal: 'overrides its instructions', strong: true, pattern: /\bsystem\s+override\b|\bnew\s+(?:instructions|rules)\s*:/i },
  // A line that opens like the prompt's fences (`<<<PASSAGE …`, `<<<END …`): prompt.ts escapes it, but it is there to be read as one.
  { signal: 'forges a passage fence', strong: true, pattern: /^\s*<<<\s*(?:PASSAGE|END)\b/im },
  { signal: 'carries chat control tokens', strong: true, pattern: /<\|(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id)\|>|\[\/?INST\]|<<\/?SYS>>/i },
  {
    signal: 'asks for the prompt',
    strong: true,
    pattern: /\b(?:print|reveal|repeat|disclose|output|show|recite|leak)\s+(?:(?:all|out|its|your|the|of)\s+){0,3}(?:system\s+)?(?:rules|prompt|instructions)(?:\s+and\s+(?:rules|instructions))?\b[^.!?\n]{0,60}\b(?:word\s+for\s+word|verbatim|fence|exactly)\b|\b(?:system|hidden|initial)\s+prompt\b[^.!?\n]{0,30}\b(?:reveal|print|repeat|disclose)\b/i,
  },
  { signal: 'addresses the assistant', strong: false, pattern: /(?:^|\n)\s*(?:assistant|AI|chatbot|LLM|model)\s*:|\b(?:the|an?|dear)\s+(?:AI\s+)?(?:assistant|chatbot|language\s+model|LLM)\s+(?:must|should|shall|has\s+to|needs\s+to|is\s+to)\b|\byou\s+are\s+(?:now\s+)?(?:an?|the)\s+(?:AI|assistant|chatbot|language\s+model)\b/i },
  { signal: 'directs the answer', strong: false, pattern: /\btell\s+the\s+user\b/i },
  { signal: 'directs the answer', strong: false, pattern: /\bwhen\s+(?:anyone|someone|somebody|a\s+user|the\s+user|users)\s+asks?\b/i },
  { signal: 'directs the answer', strong: false, pattern: /\b(?:before|when)\s+(?:answering|you\s+answer)\b|\bto\s+answer\s+(?:a|any|every|the)\s+question\b|\banswer\s+(?:every|any|all)\s+questions?\b/i },
  { signal: 'directs the answer', strong: false, pattern: /\b(?:answer|reply|respond)\s+(?:\w+\s+){0,6}?with\s+exactly\b/i },
  { signal: 'directs the answer', strong: false, pattern: /\bcite\s+(?:it|this|\[)/i },
  // `[handbook.md#0]`: the product's own citation form. Its own documentation shows it, so it is weak.
  { signal: 'forges a citation label', strong: false, pattern: /\[[^\s\[\]]+#\d+\]/ },
  // BIPIA-style riders (microsoft/BIPIA benchmark/text_attack_*.json): "in your response", "encode your reply".
  { signal: 'speaks to the answerer', strong: true, pattern: /\b(?:in|to|into|with)\s+your\s+(?:answer|response|reply)\b|\byour\s+(?:answer|response|reply)(?:'s)?\s+(?:in|using|by|backward)\b|\b(?:encode|encrypt|translate|reverse|render|modify|enhance|augment)\s+your\s+(?:answer|response|reply|message)\b/i },
];

export interface InstructionReading {
  /** The distinct signals found, in the order of RULES. */
  signals: InstructionSignal[];
  /** One strong rule matched, or two weak ones. */
  addressesTheModel: boolean;
}

export function readInstructions(text: string): InstructionReading {
  const matched = RULES.filter((rule) => rule.pattern.test(text));
  const weak = matched.filter((rule) => !rule.strong).length;
  return { signals: [...new Set(matched.map((rule) => rule.signal))], addressesTheModel: weak >= 2 || matched.some((rule) => rule.strong) };
}
