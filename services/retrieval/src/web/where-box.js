// The "where" box under the question: optional search controls, sent as the request's `filter`
// ({"source": glob, "type": [ext, ...]}) and `max_per_source` (docs/api.md, "Search controls").

const typeInput = document.getElementById('where-type');
const folderInput = document.getElementById('where-folder');
const maxInput = document.getElementById('where-max');

/** "md, .PDF docx" → ["md", "pdf", "docx"]: extensions, lower-cased, without the dot. */
function fileTypes(text) {
  const types = text.split(/[\s,]+/).map((type) => type.replace(/^\./, '').toLowerCase()).filter((type) => type !== '');
  return Array.from(new Set(types));
}

/** The box's fields as request fields; only those filled in (an empty box adds nothing). */
export function searchControls() {
  const controls = {};
  const filter = {};
  const folder = folderInput.value.trim();
  if (folder) filter.source = folder;
  const types = fileTypes(typeInput.value);
  if (types.length > 0) filter.type = types;
  if (Object.keys(filter).length > 0) controls.filter = filter;
  const max = maxInput.value.trim();
  // A value out of bounds is sent as given: the API's 400 (RAG_INVALID_MAX_PER_SOURCE) says what is allowed.
  if (max) controls.max_per_source = Number(max);
  return controls;
}

/** "type md, pdf · folder docs/** · at most 2 per source", or '' when no control is set. */
export function describeControls(controls) {
  const parts = [];
  if (controls.filter && controls.filter.type) parts.push('type ' + controls.filter.type.join(', '));
  if (controls.filter && controls.filter.source) parts.push('folder ' + controls.filter.source);
  if (controls.max_per_source !== undefined) parts.push('at most ' + controls.max_per_source + ' per source');
  return parts.join(' · ');
}
