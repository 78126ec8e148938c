// The page's entry module. GET /app.js serves it joined with the modules it imports, as one script
// (routes/page-script.ts; the Content-Security-Policy allows no inline script). API data is written with
// textContent, except Markdown (answers, passages): markdown.js says how it is made safe.
import { apiHeaders, errorOf, forgetKey, post, saveKey, storedKey } from './api-client.js';
import { citationLabel, renderAnswer, renderCitations } from './answer-view.js';
import { historyToSend } from './conversation.js';
import { documentLink, openWithKey, pageLabel } from './document-links.js';
import { renderGrounding } from './grounding-view.js';
import { element } from './dom.js';
import { queryTerms } from './highlight.js';
import { renderPassage } from './passage-view.js';
import { claimsByCitation } from './sentence-match.js';
import { readServerEvents } from './server-events.js';
import { describeControls, searchControls } from './where-box.js';

const form = document.getElementById('query-form');
const question = document.getElementById('question');
const buttons = [document.getElementById('ask'), document.getElementById('search')];
const status = document.getElementById('status');
const errorBox = document.getElementById('error');
const answerPanel = document.getElementById('answer-panel');
const answer = document.getElementById('answer');
const mode = document.getElementById('mode');
const usage = document.getElementById('usage');
const unknown = document.getElementById('unknown');
const groundingBox = document.getElementById('grounding');
const citations = document.getElementById('citations');
const resultsPanel = document.getElementById('results-panel');
const results = document.getElementById('results');
const keyForm = document.getElementById('key-form');
const keyInput = document.getElementById('api-key');
const notCovered = document.getElementById('not-covered');
const passagePanel = document.getElementById('passage-panel');
const passageText = document.getElementById('passage-text');
const passageDocument = document.getElementById('passage-document');
const searchQuery = document.getElementById('search-query');
const whereUsed = document.getElementById('where-used');
const threadPanel = document.getElementById('thread');
const threadTurns = document.getElementById('thread-turns');
const followUpForm = document.getElementById('follow-up-form');
const followUp = document.getElementById('follow-up');

/** The request in flight; a new submission aborts it. */
let current = null;
/** The last question asked, run again once a key is given after a 401. */
let last = null;
/** The conversation's earlier turns, [{question, answer}], oldest first; empty for a new conversation. */
let thread = [];
/** The turn on screen once its answer is complete: it joins the thread when a follow-up is asked. */
let answered = null;
/** The answer's text so far (streamed tokens, then the final answer): what each citation is cited for. */
let answerText = '';
/** The citations of the answer on screen, by label, with their pages. */
let citationsByLabel = new Map();

function formatScore(score) {
  return typeof score === 'number' ? score.toFixed(4) : String(score);
}

function showError(code, message) {
  errorBox.querySelector('.code').textContent = code;
  errorBox.querySelector('.message').textContent = message;
  errorBox.hidden = false;
}

function reset() {
  errorBox.hidden = true;
  status.textContent = '';
  answerPanel.hidden = true;
  answer.textContent = '';
  answer.classList.remove('markdown');
  answer.setAttribute('aria-busy', 'false');
  answerText = '';
  citationsByLabel = new Map();
  notCovered.hidden = true;
  passagePanel.hidden = true;
  mode.hidden = true;
  usage.hidden = true;
  searchQuery.hidden = true;
  whereUsed.hidden = true;
  followUpForm.hidden = true;
  unknown.hidden = true;
  renderGrounding(groundingBox, undefined);
  citations.replaceChildren();
  resultsPanel.hidden = true;
  results.replaceChildren();
}

function setBusy(busy, text) {
  for (const button of buttons) button.disabled = busy;
  status.textContent = text;
}

/** A 401 (RAG_UNAUTHENTICATED): a stored key was refused, so it is dropped, and the page asks for one. */
function askForKey(error) {
  forgetKey();
  showError(error.code, error.message);
  keyForm.hidden = false;
  keyInput.focus();
}

function reportFailure(error, httpStatus) {
  if (httpStatus === 401) askForKey(error);
  else showError(error.code, error.message);
}

function renderWhereUsed(controls) {
  const text = describeControls(controls);
  whereUsed.textContent = 'where: ' + text;
  whereUsed.hidden = text === '';
}

function renderResult(result, terms) {
  const item = element('li', 'result');
  const details = element('details');
  const summary = element('summary');
  summary.append(element('span', 'source', result.source));
  if (result.heading_path) summary.append(' ', element('span', 'heading', '› ' + result.heading_path));
  const facts = element('div', 'facts');
  facts.append(element('span', 'chunk', 'chunk ' + result.chunk_index), ' · ', element('span', 'score', 'score ' + formatScore(result.score)), ' · ', documentLink(result));
  summary.append(facts);
  const text = element('div', 'text');
  renderPassage(text, result, { terms: terms });
  details.append(summary, text);
  item.append(details);
  return item;
}

async function search(query, signal) {
  setBusy(true, 'Searching…');
  const controls = searchControls();
  const response = await post('/search', Object.assign({ query: query }, controls), signal, 'application/json');
  if (!response.ok) {
    reportFailure(await errorOf(response), response.status);
    return;
  }
  const body = await response.json();
  const terms = queryTerms(query);
  for (const result of body.results) results.append(renderResult(result, terms));
  resultsPanel.hidden = false;
  status.textContent = body.results.length === 0 ? 'No passage matches.' : body.results.length + ' passages, best first.';
}

/** Reads a passage through the MCP tool get_passage (same key, same visibility as /search). */
async function readPassage(source, chunkIndex) {
  const request = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_passage', arguments: { source: source, chunk_index: chunkIndex, neighbours: 0 } } };
  const response = await fetch('/mcp', { method: 'POST', headers: apiHeaders({ 'content-type': 'application/json', accept: 'application/json, text/event-stream' }), body: JSON.stringify(request) });
  if (!response.ok) {
    reportFailure(await errorOf(response), response.status);
    return null;
  }
  const result = (await response.json()).result;
  if (!result || result.isError) {
    const error = result ? JSON.parse(result.content[0].text).error : { code: 'MCP_ERROR', message: 'The passage could not be read.' };
    showError(error.code, error.message);
    return null;
  }
  return result.structuredContent.passage;
}

/** Opens a cited passage, rendered, with the sentences the answer cites it for marked. */
async function openPassage(label) {
  const split = label.lastIndexOf('#');
  const source = label.slice(0, split);
  const passage = await readPassage(source, Number(label.slice(split + 1)));
  if (!passage) return;
  // The citation carries the pages (the passage read back may not): the link opens the document there.
  const cited = Object.assign({}, passage, citationsByLabel.get(label) || {});
  document.getElementById('passage-label').textContent = citationLabel(passage);
  document.getElementById('passage-heading').textContent = passage.heading_path;
  passageDocument.replaceChildren(documentLink(cited, pageLabel(cited) ? 'open ' + pageLabel(cited) : 'open the document'));
  renderPassage(passageText, passage, { claims: claimsByCitation(answerText).get(label) || [] });
  passagePanel.hidden = false;
  passagePanel.scrollIntoView({ block: 'nearest' });
}

answerPanel.addEventListener('click', (event) => {
  const link = event.target.closest('a.cite');
  if (!link) return;
  event.preventDefault();
  openPassage(link.dataset.label).catch((error) => showError('NETWORK_ERROR', 'The passage could not be read: ' + error.message));
});

// Without a key a document link is a plain link (it follows a gs:// document's redirect to its signed URL);
// with one, the document is fetched with the key, which a link cannot send.
document.addEventListener('click', (event) => {
  const link = event.target.closest('a.document');
  if (!link || !storedKey() || event.button !== 0) return;
  event.preventDefault();
  openWithKey(link, reportFailure);
});

function showCitations(list) {
  citationsByLabel = new Map(list.map((citation) => [citationLabel(citation), citation]));
  renderCitations(citations, list);
}

function renderSearchQuery(text) {
  if (!text) return;
  searchQuery.textContent = 'searched for: ' + text;
  searchQuery.hidden = false;
}

function renderDone(done) {
  answerText = done.answer;
  renderAnswer(answer, done.answer);
  renderSearchQuery(done.search_query);
  answered = { question: last.query, answer: done.answer };
  followUpForm.hidden = false;
  notCovered.hidden = (done.citations || []).length > 0;
  showCitations(done.citations || []);
  mode.textContent = done.mode;
  mode.hidden = false;
  if (done.usage) {
    usage.textContent = 'tokens: ' + done.usage.prompt_tokens + ' prompt, ' + done.usage.completion_tokens + ' completion, ' + done.usage.total_tokens + ' total';
    usage.hidden = false;
  }
  renderGrounding(groundingBox, done.grounding);
  if (done.unknown_citations && done.unknown_citations.length > 0) {
    unknown.textContent = 'Cited but not among the passages: ' + done.unknown_citations.join(', ');
    unknown.hidden = false;
  }
}

/** Handles one Server-Sent Event; returns true once the stream is over (done or error). */
function handleEvent(name, data) {
  if (name === 'citations') {
    showCitations(data.citations);
    renderSearchQuery(data.search_query);
    answerPanel.hidden = false;
  } else if (name === 'token') {
    answerText += data.text;
    answer.append(data.text);
  } else if (name === 'done') {
    renderDone(data);
    return true;
  } else if (name === 'error') {
    showError(data.code, data.message);
    return true;
  }
  return false;
}

function renderThread() {
  threadTurns.replaceChildren();
  for (const turn of thread) {
    const item = element('li', 'turn');
    item.append(element('p', 'turn-question', turn.question), element('p', 'turn-answer', turn.answer));
    threadTurns.append(item);
  }
  threadPanel.hidden = thread.length === 0;
}

async function ask(query, signal) {
  setBusy(true, 'Retrieving passages…');
  const history = historyToSend(thread);
  // The where box is read at every question: a follow-up searches where the conversation searched, unless changed.
  const controls = searchControls();
  const body = Object.assign(history.length > 0 ? { query: query, history: history, stream: true } : { query: query, stream: true }, controls);
  const response = await post('/chat', body, signal, 'text/event-stream');
  const type = response.headers.get('content-type') || '';
  if (!response.ok || !type.includes('text/event-stream')) {
    reportFailure(await errorOf(response), response.status);
    return;
  }
  answerPanel.hidden = false;
  renderWhereUsed(controls);
  answer.setAttribute('aria-busy', 'true');
  status.textContent = 'Answering…';
  const finished = await readServerEvents(response, handleEvent);
  answer.setAttribute('aria-busy', 'false');
  if (!finished) showError('STREAM_INTERRUPTED', 'The answer stream ended before its done event.');
  status.textContent = '';
}

function start(action, query) {
  last = { action: action, query: query };
  if (current) current.abort();
  const controller = new AbortController();
  current = controller;
  reset();
  const run = action === 'search' ? search : ask;
  run(query, controller.signal)
    .catch((error) => {
      if (controller.signal.aborted) return;
      showError('NETWORK_ERROR', 'The request failed: ' + (error && error.message ? error.message : String(error)));
      status.textContent = '';
    })
    .finally(() => {
      if (current !== controller) return;
      current = null;
      answer.setAttribute('aria-busy', 'false');
      for (const button of buttons) button.disabled = false;
      if (errorBox.hidden === false) status.textContent = '';
    });
}

/** Starts a new conversation: the thread and the answer on screen are cleared. */
function newConversation() {
  if (current) current.abort();
  thread = [];
  answered = null;
  renderThread();
  reset();
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const action = event.submitter && event.submitter.value === 'search' ? 'search' : 'ask';
  // The question box starts a conversation; follow-ups are asked in the box under the answer.
  if (action === 'ask') newConversation();
  start(action, question.value);
});

followUpForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = followUp.value.trim();
  if (!text || !answered) return;
  thread.push(answered);
  answered = null;
  renderThread();
  followUp.value = '';
  start('ask', text);
});

document.getElementById('new-conversation').addEventListener('click', () => {
  newConversation();
  question.value = '';
  question.focus();
});

keyForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const key = keyInput.value.trim();
  if (!key) return;
  saveKey(key);
  keyInput.value = '';
  keyForm.hidden = true;
  if (last) start(last.action, last.query);
});
