/** Writes docs/errors.md from the error registry: `pnpm docs:errors`. A test fails when they drift apart. */
import { writeFileSync } from 'node:fs';
import { errorsPageRows } from '../src/errors-page.ts';

const page = `# Error codes

Every error the API returns is JSON \`{"error": {"code", "message"}}\`. A code keeps one meaning forever; the message tells you what to do. The registry is \`packages/core/src/errors.ts\`; \`pnpm docs:errors\` writes this page from it, and a test keeps the two in step.

| code | HTTP status | meaning and what to do |
| --- | --- | --- |
${errorsPageRows().join('\n')}

Dependency failures are classified once, where the call is made: a refused connection, a 5xx answer or a malformed body is \`RAG_<DEPENDENCY>_UNAVAILABLE\` (503), no answer within the configured timeout is \`RAG_<DEPENDENCY>_TIMEOUT\` (504). Requests are retried a bounded number of times with jittered backoff on 429, 502, 503 and network errors only.
`;
writeFileSync(new URL('../../../docs/errors.md', import.meta.url), page);
