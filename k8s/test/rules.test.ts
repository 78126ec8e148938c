/**
 * Prometheus rules and Alertmanager's routing: every rule file passes `promtool check rules`, and its
 * unit tests (`<name>.test.yml` beside it: each alert firing and staying quiet, the cost recording
 * rules on known traffic) pass `promtool test rules`. Skipped, saying why, without promtool.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseDir, type Manifest, podSpecOf, ragDir, readKustomization, readYaml } from './render.ts';

const files = join(ragDir, 'observability/files');
const ruleFiles = readdirSync(files).filter((file) => /\.yml$/.test(file) && !file.endsWith('.test.yml') && readYaml(join(files, file))[0]?.groups);
const prometheusConfig = readYaml(join(files, 'prometheus.yml'))[0];
const promtool = ['/usr/bin/promtool', '/usr/local/bin/promtool'].find((path) => existsSync(path));
if (!promtool) console.warn('promtool is not installed (Debian package prometheus): the rule checks and rule unit tests are skipped');

function run(args: string[]): string {
  try {
    return execFileSync(promtool!, args, { cwd: files, encoding: 'utf8', stdio: 'pipe' });
  } catch (error) {
    const failure = error as { stdout?: string; stderr?: string };
    throw new Error(`promtool ${args.join(' ')}\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
  }
}

describe('Prometheus rules', () => {
  it('are all loaded by Prometheus, each with its unit tests beside it', () => {
    expect(ruleFiles.length).toBeGreaterThan(0);
    for (const file of ruleFiles) {
      expect(prometheusConfig.rule_files).toContain(`/etc/prometheus/${file}`);
      expect(existsSync(join(files, file.replace(/\.yml$/, '.test.yml'))), `${file} has no unit tests`).toBe(true);
    }
  });

  it('test every alert, both firing and quiet', () => {
    for (const file of ruleFiles) {
      const rules: Manifest[] = readYaml(join(files, file))[0].groups.flatMap((group: Manifest) => group.rules.filter((rule: Manifest) => rule.alert));
      const alerts: string[] = rules.map((rule) => rule.alert);
      // An always-firing rule (the Watchdog) has no quiet case to show.
      const alwaysFiring = new Set(rules.filter((rule) => rule.expr === 'vector(1)').map((rule) => rule.alert));
      const cases: Manifest[] = readYaml(join(files, file.replace(/\.yml$/, '.test.yml')))[0].tests.flatMap((test: Manifest) => test.alert_rule_test ?? []);
      for (const alert of alerts) {
        const mine = cases.filter((test) => test.alertname === alert);
        expect(mine.some((test) => test.exp_alerts.length > 0), `${alert} never fires in a test`).toBe(true);
        if (!alwaysFiring.has(alert)) expect(mine.some((test) => test.exp_alerts.length === 0), `${alert} is never shown quiet`).toBe(true);
      }
    }
  });

  it.skipIf(!promtool).each(ruleFiles)('%s passes promtool check rules', (file) => {
    expect(run(['check', 'rules', file])).toContain('SUCCESS');
  });

  // Hours of simulated series, evaluated minute by minute: seconds of CPU, more on a loaded machine.
  it.skipIf(!promtool).each(ruleFiles)('%s passes its promtool unit tests', (file) => {
    expect(run(['test', 'rules', file.replace(/\.yml$/, '.test.yml')])).toContain('SUCCESS');
  }, 180_000);
});

describe('Alertmanager', () => {
  const config = readYaml(join(files, 'alertmanager.yml'))[0];
  const { objects } = readKustomization(baseDir);
  const deployment = objects.find((object) => object.kind === 'Deployment' && object.metadata.name === 'alertmanager');
  const pod = podSpecOf(deployment);

  it('receives the alerts of Prometheus', () => {
    const service = objects.find((object) => object.kind === 'Service' && object.metadata.name === 'alertmanager');
    expect(prometheusConfig.alerting.alertmanagers[0].static_configs[0].targets).toEqual([`alertmanager.rag.svc.cluster.local:${service.spec.ports[0].port}`]);
  });

  it('routes page and ticket alerts to the webhook read from a secret, everything else to the log receiver', () => {
    const receivers = new Map<string, Manifest>(config.receivers.map((receiver: Manifest) => [receiver.name, receiver]));
    expect(config.route.receiver).toBe('log');
    expect(Object.keys(receivers.get('log'))).toEqual(['name']);
    const route = config.route.routes.find((candidate: Manifest) => candidate.receiver === 'webhook');
    expect(route.matchers).toEqual(['severity=~"page|ticket"']);
    const urlFile: string = receivers.get(route.receiver).webhook_configs[0].url_file;
    const mount = pod.containers[0].volumeMounts.find((candidate: Manifest) => urlFile.startsWith(`${candidate.mountPath}/`));
    const volume = pod.volumes.find((candidate: Manifest) => candidate.name === mount.name);
    expect(volume.secret.secretName).toBe('alertmanager-receiver');
    expect(pod.containers[0].args).toContain('--log.level=debug');
  });

  it('gets a severity the routes know from every alert, or a route of its own', () => {
    const config = readYaml(join(files, 'alertmanager.yml'))[0];
    const ownRoutes = new Set(config.route.routes.flatMap((route: Manifest) => route.matchers ?? []).map((matcher: string) => /^alertname="?([A-Za-z]+)"?$/.exec(matcher)?.[1]).filter(Boolean));
    expect(ownRoutes.has('Watchdog')).toBe(true);
    for (const file of ruleFiles) {
      for (const group of readYaml(join(files, file))[0].groups) {
        for (const rule of group.rules.filter((candidate: Manifest) => candidate.alert)) {
          if (!ownRoutes.has(rule.alert)) expect(['page', 'ticket'], rule.alert).toContain(rule.labels.severity);
        }
      }
    }
  });
});
