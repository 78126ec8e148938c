/**
 * OTEL_RAG_RECORD_QUERY: whether spans carry the user's query text. Off by default: a query can hold
 * anything a user typed (names, account numbers), and traces leave the cluster for Cloud Trace.
 */
let recordQuery = false;

export function setQueryRecording(enabled: boolean): void {
  recordQuery = enabled;
}

export function isQueryRecorded(): boolean {
  return recordQuery;
}
