// The grounding check of a generated answer (the done event's `grounding`): whether every sentence is
// supported by a passage, and the sentences that are not, or that cite the wrong passage or none.
import { element } from './dom.js';

const NOTES = {
  unsupported: 'supported by no passage',
  miscited: 'not by the passage it cites; supported by ',
  attributed: 'cites nothing; supported by ',
};

/** Fills `container` from `grounding`, or hides it when the answer was not checked (extractive). */
export function renderGrounding(container, grounding) {
  container.replaceChildren();
  container.hidden = !grounding;
  if (!grounding) return;
  const flagged = grounding.sentences.filter((sentence) => sentence.status in NOTES);
  container.classList.toggle('ungrounded', !grounding.grounded);
  const summary = grounding.grounded
    ? 'Grounded: every sentence is supported by a passage given.'
    : 'Not grounded: ' + grounding.unsupported + ' sentence' + (grounding.unsupported === 1 ? ' is' : 's are') + ' supported by no passage given.';
  container.append(element('p', 'summary', summary));
  if (flagged.length === 0) return;
  const list = element('ul', 'flagged');
  for (const sentence of flagged) {
    const item = element('li', sentence.status);
    item.append(element('q', null, sentence.text), ' — ' + NOTES[sentence.status] + (sentence.status === 'unsupported' ? '' : sentence.supported_by));
    list.append(item);
  }
  container.append(list);
}
