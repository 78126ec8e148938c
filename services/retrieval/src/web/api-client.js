// Requests to the API from the page: the API key the user gave (this tab only) and the error shape.

/** Where the API key lives: this tab only (sessionStorage), gone when it closes. */
const KEY_STORAGE = 'rag-api-key';

export function storedKey() {
  try {
    return sessionStorage.getItem(KEY_STORAGE) || '';
  } catch (_error) {
    return '';
  }
}

export function saveKey(key) {
  sessionStorage.setItem(KEY_STORAGE, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_STORAGE);
}

/** The headers of every API call: the stored key, when there is one, as a Bearer token. */
export function apiHeaders(extra) {
  const headers = Object.assign({}, extra);
  const key = storedKey();
  if (key) headers.authorization = 'Bearer ' + key;
  return headers;
}

export function post(path, body, signal, accept) {
  return fetch(path, {
    method: 'POST',
    headers: apiHeaders({ 'content-type': 'application/json', accept: accept }),
    body: JSON.stringify(body),
    signal: signal,
  });
}

/** An API error body is {"error": {"code", "message"}}; anything else is reported as it came. */
export async function errorOf(response) {
  const body = await response.json().catch(() => null);
  if (body && body.error && body.error.code) return body.error;
  return { code: 'HTTP ' + response.status, message: response.statusText || 'The server answered an unexpected response.' };
}
