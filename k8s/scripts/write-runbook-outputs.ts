/** `pnpm docs:runbook`: writes the runbook's expected outputs from the repository (k8s/test/runbook-outputs.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { runbookPath, withExpectedOutputs } from '../test/runbook-outputs.ts';

writeFileSync(runbookPath, withExpectedOutputs(readFileSync(runbookPath, 'utf8')));
