// The page's only script, served as GET /app.js (the Content-Security-Policy allows no inline script).
// API data is written with textContent, except an answer's Markdown: parsed by marked with raw HTML
// escaped, then sanitised by DOMPurify (both served from this origin, /vendor/), before it is inserted.
'use strict';

(function () {
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
  const citations = document.getElementById('citations');
  const resultsPanel = document.getElementById('results-panel');
  const results = document.getElementById('results');
  const keyForm = document.getElementById('key-form');
  const keyInput = document.getElementById('api-key');
  const notCovered = document.getElementById('not-covered');
  const passagePanel = document.getElementById('passage-panel');
  const searchQuery = document.getElementById('search-query');
  const threadPanel = document.getElementById('thread');
  const threadTurns = document.getElementById('thread-turns');
  const followUpForm = document.getElementById('follow-up-form');
  const followUp = document.getElementById('follow-up');

  /** What POST /chat accepts of earlier turns (RAG_CONVERSATION_TOO_LONG past it): the oldest are dropped first. */
  const MAX_HISTORY_PAIRS = 10;
  const MAX_HISTORY_CHARS = 16000;

  /** A `[source#chunk]` label in an answer. */
  const CITATION = /\[([^\[\]\s]+#\d+)\]/g;

  // Raw HTML in an answer is shown as text, never interpreted: a document or a model cannot inject markup.
  marked.use({
    renderer: {
      html: function (token) {
        return token.text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
      },
    },
  });

  /** Where the API key lives: this tab only, gone when it closes. */
  const KEY_STORAGE = 'rag-api-key';

  /** The request in flight; a new submission aborts it. */
  let current = null;
  /** The last question asked, run again once a key is given after a 401. */
  let last = null;
  /** The conversation's earlier turns, [{question, answer}], oldest first; empty for a new conversation. */
  let thread = [];
  /** The turn on screen once its answer is complete: it joins the thread when a follow-up is asked. */
  let answered = null;

  function element(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function label(citation) {
    return citation.source + '#' + citation.chunk_index;
  }

  function formatScore(score) {
    return typeof score === 'number' ? score.toFixed(4) : String(score);
  }

  /** Chunk texts start with the `<source> > <heading path>` line the pipeline embeds; the summary shows both already. */
  function passageBody(result) {
    const title = result.heading_path ? result.source + ' > ' + result.heading_path : result.source;
    const text = String(result.text);
    if (text.startsWith(title + '\n')) return text.slice(title.length).replace(/^\n+/, '');
    return text;
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
    notCovered.hidden = true;
    passagePanel.hidden = true;
    mode.hidden = true;
    usage.hidden = true;
    searchQuery.hidden = true;
    followUpForm.hidden = true;
    unknown.hidden = true;
    citations.replaceChildren();
    resultsPanel.hidden = true;
    results.replaceChildren();
  }

  function setBusy(busy, text) {
    for (const button of buttons) button.disabled = busy;
    status.textContent = text;
  }

  /** An API error body is {"error": {"code", "message"}}; anything else is reported as it came. */
  async function errorOf(response) {
    const body = await response.json().catch(() => null);
    if (body && body.error && body.error.code) return body.error;
    return { code: 'HTTP ' + response.status, message: response.statusText || 'The server answered an unexpected response.' };
  }

  function storedKey() {
    try {
      return sessionStorage.getItem(KEY_STORAGE) || '';
    } catch (_error) {
      return '';
    }
  }

  /** A 401 (RAG_UNAUTHENTICATED): a stored key was refused, so it is dropped, and the page asks for one. */
  function askForKey(error) {
    sessionStorage.removeItem(KEY_STORAGE);
    showError(error.code, error.message);
    keyForm.hidden = false;
    keyInput.focus();
  }

  function post(path, body, signal, accept) {
    const headers = { 'content-type': 'application/json', accept: accept };
    const key = storedKey();
    if (key) headers.authorization = 'Bearer ' + key;
    return fetch(path, {
      method: 'POST',
      headers: headers,
      body: JSON.stringify(body),
      signal: signal,
    });
  }

  async function search(query, signal) {
    setBusy(true, 'Searching…');
    const response = await post('/search', { query: query }, signal, 'application/json');
    if (!response.ok) {
      const error = await errorOf(response);
      if (response.status === 401) askForKey(error);
      else showError(error.code, error.message);
      return;
    }
    const body = await response.json();
    const terms = queryTerms(query);
    for (const result of body.results) {
      const item = element('li', 'result');
      const details = element('details');
      const summary = element('summary');
      summary.append(element('span', 'source', result.source));
      if (result.heading_path) summary.append(' ', element('span', 'heading', '› ' + result.heading_path));
      const facts = element('div', 'facts');
      facts.append(
        element('span', 'chunk', 'chunk ' + result.chunk_index),
        ' · ',
        element('span', 'score', 'score ' + formatScore(result.score)),
      );
      summary.append(facts);
      const text = element('p', 'text');
      text.append(...highlighted(passageBody(result), terms));
      details.append(summary, text);
      item.append(details);
      results.append(item);
    }
    resultsPanel.hidden = false;
    status.textContent = body.results.length === 0 ? 'No passage matches.' : body.results.length + ' passages, best first.';
  }

  /** The query's words of two letters or more, lower-cased, for highlighting. */
  function queryTerms(query) {
    const words = query.toLowerCase().match(/[\p{L}\p{N}_]{2,}/gu) || [];
    return Array.from(new Set(words));
  }

  /** The text as nodes, each occurrence of a term (at a word start) wrapped in <mark>. */
  function highlighted(text, terms) {
    if (terms.length === 0) return [text];
    const escaped = terms.map((term) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp('(?<![\\p{L}\\p{N}_])(' + escaped.join('|') + ')', 'giu');
    const nodes = [];
    let at = 0;
    for (const match of text.matchAll(pattern)) {
      if (match.index > at) nodes.push(text.slice(at, match.index));
      nodes.push(element('mark', '', match[0]));
      at = match.index + match[0].length;
    }
    if (at < text.length) nodes.push(text.slice(at));
    return nodes;
  }

  /** The answer as sanitised Markdown, each [source#chunk] label a link that opens the passage. */
  function renderAnswer(text) {
    answer.replaceChildren(DOMPurify.sanitize(marked.parse(text).trim(), { RETURN_DOM_FRAGMENT: true }));
    answer.classList.add('markdown');
    const walker = document.createTreeWalker(answer, NodeFilter.SHOW_TEXT);
    const textNodes = [];
    while (walker.nextNode()) textNodes.push(walker.currentNode);
    for (const node of textNodes) {
      const value = node.nodeValue;
      if (!CITATION.test(value)) continue;
      CITATION.lastIndex = 0;
      const parts = [];
      let at = 0;
      for (const match of value.matchAll(CITATION)) {
        if (match.index > at) parts.push(value.slice(at, match.index));
        const link = element('a', 'cite', '[' + match[1] + ']');
        link.href = '#passage';
        link.dataset.label = match[1];
        parts.push(link);
        at = match.index + match[0].length;
      }
      if (at < value.length) parts.push(value.slice(at));
      node.replaceWith(...parts);
    }
  }

  /** Opens a cited passage's text, read through the MCP tool get_passage (same key, same visibility). */
  async function openPassage(citationLabel) {
    const split = citationLabel.lastIndexOf('#');
    const source = citationLabel.slice(0, split);
    const chunkIndex = Number(citationLabel.slice(split + 1));
    const request = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_passage', arguments: { source: source, chunk_index: chunkIndex, neighbours: 0 } } };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const key = storedKey();
    if (key) headers.authorization = 'Bearer ' + key;
    const response = await fetch('/mcp', { method: 'POST', headers: headers, body: JSON.stringify(request) });
    if (!response.ok) {
      const error = await errorOf(response);
      if (response.status === 401) askForKey(error);
      else showError(error.code, error.message);
      return;
    }
    const result = (await response.json()).result;
    if (!result || result.isError) {
      const error = result ? JSON.parse(result.content[0].text).error : { code: 'MCP_ERROR', message: 'The passage could not be read.' };
      showError(error.code, error.message);
      return;
    }
    const passage = result.structuredContent.passage;
    document.getElementById('passage-label').textContent = label(passage);
    document.getElementById('passage-heading').textContent = passage.heading_path;
    document.getElementById('passage-text').textContent = passageBody(passage);
    passagePanel.hidden = false;
    passagePanel.scrollIntoView({ block: 'nearest' });
  }

  answer.addEventListener('click', (event) => {
    const link = event.target.closest('a.cite');
    if (!link) return;
    event.preventDefault();
    openPassage(link.dataset.label).catch((error) => showError('NETWORK_ERROR', 'The passage could not be read: ' + error.message));
  });

  function renderCitations(list) {
    citations.replaceChildren();
    for (const citation of list) {
      const item = element('li', 'citation');
      item.dataset.label = label(citation);
      item.append(element('span', 'label', label(citation)));
      if (citation.heading_path) item.append(' ', element('span', 'heading', citation.heading_path));
      citations.append(item);
    }
    if (list.length === 0) citations.append(element('li', 'none', 'No passage was cited.'));
  }

  function renderSearchQuery(text) {
    if (!text) return;
    searchQuery.textContent = 'searched for: ' + text;
    searchQuery.hidden = false;
  }

  function renderDone(done) {
    renderAnswer(done.answer);
    renderSearchQuery(done.search_query);
    answered = { question: last.query, answer: done.answer };
    followUpForm.hidden = false;
    notCovered.hidden = (done.citations || []).length > 0;
    renderCitations(done.citations || []);
    mode.textContent = done.mode;
    mode.hidden = false;
    if (done.usage) {
      usage.textContent =
        'tokens: ' + done.usage.prompt_tokens + ' prompt, ' + done.usage.completion_tokens + ' completion, ' + done.usage.total_tokens + ' total';
      usage.hidden = false;
    }
    if (done.unknown_citations && done.unknown_citations.length > 0) {
      unknown.textContent = 'Cited but not among the passages: ' + done.unknown_citations.join(', ');
      unknown.hidden = false;
    }
  }

  /** Handles one Server-Sent Event; returns true once the stream is over (done or error). */
  function handleEvent(name, data) {
    if (name === 'citations') {
      renderCitations(data.citations);
      renderSearchQuery(data.search_query);
      answerPanel.hidden = false;
    } else if (name === 'token') {
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

  /** Splits a block of SSE lines into its event name and its data (JSON). */
  function parseFrame(frame) {
    let name = 'message';
    const data = [];
    for (const line of frame.split('\n')) {
      if (line.startsWith('event:')) name = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    return { name: name, data: data.length > 0 ? JSON.parse(data.join('\n')) : null };
  }

  /** The most recent turns within the bounds of POST /chat. */
  function historyToSend() {
    const kept = [];
    let chars = 0;
    for (let index = thread.length - 1; index >= 0 && kept.length < MAX_HISTORY_PAIRS; index -= 1) {
      chars += thread[index].question.length + thread[index].answer.length;
      if (chars > MAX_HISTORY_CHARS) break;
      kept.unshift(thread[index]);
    }
    return kept;
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
    const history = historyToSend();
    const body = history.length > 0 ? { query: query, history: history, stream: true } : { query: query, stream: true };
    const response = await post('/chat', body, signal, 'text/event-stream');
    const type = response.headers.get('content-type') || '';
    if (!response.ok || !type.includes('text/event-stream')) {
      const error = await errorOf(response);
      if (response.status === 401) askForKey(error);
      else showError(error.code, error.message);
      return;
    }
    answerPanel.hidden = false;
    answer.setAttribute('aria-busy', 'true');
    status.textContent = 'Answering…';
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    let finished = false;
    while (!finished) {
      const chunk = await reader.read();
      if (chunk.done) break;
      buffer += chunk.value.replace(/\r\n?/g, '\n');
      let end;
      while (!finished && (end = buffer.indexOf('\n\n')) !== -1) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (frame.trim() === '') continue;
        const event = parseFrame(frame);
        finished = handleEvent(event.name, event.data);
      }
    }
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
    sessionStorage.setItem(KEY_STORAGE, key);
    keyInput.value = '';
    keyForm.hidden = true;
    if (last) start(last.action, last.query);
  });
})();
