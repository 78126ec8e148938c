// Links from a citation or a result to its original document (GET /documents/<source>), at its page.
import { apiHeaders, errorOf } from './api-client.js';
import { element } from './dom.js';

/** How long a fetched document's blob: URL stays valid: long enough for the new tab to load it. */
const BLOB_LIFETIME_MS = 60_000;

function isSlides(source) {
  return /\.pptx$/i.test(source);
}

/**
 * "p. 12", "pp. 12–13", "slide 3" or "slides 3–4" for a result or citation of a paged document (its
 * `page`, 1-based, and `pages`, ascending, when it spans several); '' for one without pages.
 */
export function pageLabel(item) {
  if (typeof item.page !== 'number') return '';
  const pages = Array.isArray(item.pages) && item.pages.length > 1 ? item.pages : [item.page];
  const first = pages[0];
  const last = pages[pages.length - 1];
  if (isSlides(item.source)) return first === last ? 'slide ' + first : 'slides ' + first + '–' + last;
  return first === last ? 'p. ' + first : 'pp. ' + first + '–' + last;
}

/**
 * The document's URL on this API; a PDF opens at the page with the `#page=N` open parameter
 * (RFC 8118 §3, https://www.rfc-editor.org/rfc/rfc8118#section-3), which Chromium's and Firefox's viewers follow.
 */
export function documentHref(source, page) {
  const href = '/documents/' + encodeURIComponent(source);
  return typeof page === 'number' && /\.pdf$/i.test(source) ? href + '#page=' + page : href;
}

/** A link opening the item's document, at its page when it has one; its text is the page label, or `text`. */
export function documentLink(item, text) {
  const link = element('a', 'document', text || pageLabel(item) || 'open');
  link.href = documentHref(item.source, item.page);
  link.target = '_blank';
  // The tab may end on another origin (a gs:// document's signed URL): it gets no handle on this page
  // (window.opener, reverse tabnabbing) and no Referer naming it.
  link.rel = 'noopener noreferrer';
  link.dataset.source = item.source;
  if (typeof item.page === 'number') link.dataset.page = String(item.page);
  link.title = 'Open ' + item.source + (pageLabel(item) ? ' at ' + pageLabel(item) : '');
  return link;
}

/** What the new tab shows of the fetched document: a PDF as itself, any text as plain text, the rest downloaded. */
function shownAs(contentType) {
  if (/^application\/pdf/i.test(contentType)) return 'application/pdf';
  // A blob: document loses the route's sandboxing policy: an HTML file must not run as this page's origin.
  if (/^text\//i.test(contentType)) return 'text/plain;charset=utf-8';
  return null;
}

/**
 * Opens the document of `link` with the API key, which a plain link cannot send: fetched with the
 * Authorization header, then shown from a blob: URL in the tab opened at the click (so no popup blocker
 * intervenes). Calls onError(error, status) when it cannot.
 */
export async function openWithKey(link, onError) {
  const tab = window.open('', '_blank');
  // Kept to navigate it once the document is fetched, but cut from this page before it leaves about:blank:
  // a document on another origin (a signed URL) must not reach this page through window.opener. The
  // 'noopener' feature of window.open would return no handle at all. HTML's opener setter: given null,
  // the tab's browsing context disowns its opener (https://html.spec.whatwg.org/multipage/nav-history-apis.html#dom-opener).
  if (tab) tab.opener = null;
  try {
    const url = link.href.split('#')[0];
    // A gs:// document lives behind a signed URL on another origin, which a redirect could not reach with
    // the key: asked for JSON, the API gives that URL, and the tab opens it (a folder file comes as itself).
    const response = await fetch(url, { headers: apiHeaders({ accept: 'application/json, */*;q=0.1' }) });
    if (!response.ok) {
      tab && tab.close();
      onError(await errorOf(response), response.status);
      return;
    }
    const contentType = response.headers.get('content-type') || '';
    if (/^application\/json/i.test(contentType)) {
      const signed = await response.json();
      if (tab) tab.location.href = signed.url + (link.hash || '');
      return;
    }
    const type = shownAs(contentType);
    const bytes = await response.blob();
    const blobUrl = URL.createObjectURL(type ? new Blob([bytes], { type: type }) : bytes);
    setTimeout(() => URL.revokeObjectURL(blobUrl), BLOB_LIFETIME_MS);
    if (type && tab) {
      tab.location.href = blobUrl + (link.hash || '');
      return;
    }
    tab && tab.close();
    const download = element('a');
    download.href = blobUrl;
    download.download = link.dataset.source.split('/').pop();
    download.click();
  } catch (error) {
    tab && tab.close();
    onError({ code: 'NETWORK_ERROR', message: 'The document could not be read: ' + (error && error.message ? error.message : String(error)) }, 0);
  }
}
