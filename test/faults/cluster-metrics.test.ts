/**
 * Issue 11, item 5, in cluster mode: the primary serves the metrics listener and sums the
 * workers' registries at each scrape (prom-client's AggregatorRegistry), so a request counts once
 * whichever worker answered it. Values read from the shared store are not multiplied by workers.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { parseExposition, scrape } from '../helpers/metrics.ts';
import { freePort } from '../helpers/server.ts';
import { startGatehouse } from './processes.ts';

const TOKEN = 'a metrics token of at least thirty-two characters';
const REQUESTS = 20;

/** A GET on a connection of its own, so the primary hands each one to the next worker in turn. */
function getOnNewConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    }).on('error', reject);
  });
}

describe('metrics in cluster mode', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-cluster-metrics-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the primary serves the sum of the two workers', async () => {
    const metricsPort = await freePort();
    // The store is new: its signing key is created after this.
    const started = Date.now();
    const server = await startGatehouse({
      databaseUrl: `sqlite:${join(dir, 'cluster.db')}`,
      env: { GATEHOUSE_WORKERS: '2', GATEHOUSE_LOG_LEVEL: 'info', GATEHOUSE_METRICS_PORT: String(metricsPort), GATEHOUSE_METRICS_TOKEN: TOKEN },
    });
    try {
      const deadline = Date.now() + 15_000;
      while (!server.output().includes('gatehouse is ready')) {
        if (Date.now() > deadline) throw new Error(`the workers did not all listen:\n${server.output()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
      assert.equal((await scrape(metricsUrl)).status, 401);
      assert.equal((await fetch(`${server.url}/metrics`)).status, 404, 'no worker serves /metrics on the main port');

      const route = '/uas/.well-known/openid-configuration';
      for (let i = 0; i < REQUESTS; i++) assert.equal(await getOnNewConnection(`${server.url}${route}`), 200);
      const scraped = await scrape(metricsUrl, TOKEN);
      assert.equal(scraped.status, 200, scraped.text);
      const samples = parseExposition(scraped.text);
      assert.equal(samples.get(`gatehouse_http_request_duration_seconds_count{method="GET",route="${route}",status="200"}`), REQUESTS);
      assert.equal(samples.get('gatehouse_processes'), 2, 'both workers are in the sum');
      assert.equal(samples.get('gatehouse_sso_sessions'), 0, 'a store-wide value, taken once');
      const age = samples.get('gatehouse_signing_key_age_seconds{alg="RS256"}')!;
      const elapsed = (Date.now() - started) / 1000;
      assert.ok(age >= 0 && age <= elapsed, `the key age is taken once, not summed over workers: ${age} s, ${elapsed} s since start`);
    } finally {
      assert.equal(await server.stop(), 0, `the primary exits 0 on SIGTERM:\n${server.output()}`);
    }
  });
});
