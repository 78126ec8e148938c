/** `pnpm k8s:prometheus-rule`: writes components/prometheus-operator/prometheus-rule.yaml from the rule files. */
import { writeFileSync } from 'node:fs';
import { prometheusRule, prometheusRulePath } from './prometheus-rule.ts';

writeFileSync(prometheusRulePath, prometheusRule());
