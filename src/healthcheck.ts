/**
 * The container's health check (Dockerfile HEALTHCHECK): exits 0 when this host's gatehouse answers
 * `GET /health/live` with 200 within 4 seconds, 1 otherwise. Liveness, not readiness: orchestrators
 * restart an unhealthy container, and restarting every instance while the database is down only
 * adds load when it returns (docs/operations.md, Health checks). gatehouse listens only after its
 * migrations, so a live container is also one whose schema is in place. It reads the same configuration as
 * the server (environment and GATEHOUSE_CONFIG) to find the port. Plain Node: the slim image has
 * no curl or wget.
 */
import { loadConfig } from './config.ts';

const TIMEOUT_MS = 4000;

export function probeUrl(host: string, port: number): string {
  // A wildcard listener is reached over loopback; an IPv6 literal needs brackets in a URL.
  const target = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${target.includes(':') ? `[${target}]` : target}:${port}/health/live`;
}

if (import.meta.main) {
  try {
    const config = loadConfig();
    const response = await fetch(probeUrl(config.host, config.port), { signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (response.status !== 200) throw new Error(`/health/live answered ${response.status}`);
    process.exit(0);
  } catch (error) {
    process.stderr.write(`gatehouse health check: ${(error as Error).message}\n`);
    process.exit(1);
  }
}
