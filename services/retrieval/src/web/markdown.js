// Markdown from the API (answers and passages alike) as safe DOM: parsed by marked with raw HTML
// escaped, then sanitised by DOMPurify (both served from this origin, /vendor/), before it is inserted.
// A Markdown link is not raw HTML: `[x](javascript:...)` reaches the HTML as written, and only the
// sanitiser removes such a URL (https://github.com/cure53/DOMPurify#what-does-it-do).

// Raw HTML in a document or an answer is shown as text, never interpreted: neither can inject markup.
marked.use({
  renderer: {
    html: function (token) {
      return token.text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    },
  },
});

/** The Markdown as a sanitised DOM fragment. */
export function markdownFragment(text) {
  return DOMPurify.sanitize(marked.parse(String(text)).trim(), { RETURN_DOM_FRAGMENT: true });
}
