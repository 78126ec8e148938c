// The Server-Sent Events of a streamed POST /chat (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation),
// read from a fetch response: only the `event` and `data` fields, which the API sends.

/** Splits a block of SSE lines into its event name and its data (JSON). */
export function parseFrame(frame) {
  let name = 'message';
  const data = [];
  for (const line of frame.split('\n')) {
    if (line.startsWith('event:')) name = line.slice(6).trim();
    else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
  }
  return { name: name, data: data.length > 0 ? JSON.parse(data.join('\n')) : null };
}

/**
 * Hands each event of the response's stream to onEvent(name, data) until it returns true (the stream's
 * last event) or the stream ends; returns whether a last event came.
 */
export async function readServerEvents(response, onEvent) {
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
      finished = onEvent(event.name, event.data);
    }
  }
  return finished;
}
