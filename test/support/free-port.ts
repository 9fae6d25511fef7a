/**
 * Ports for the servers tests start, taken from below the kernel's ephemeral range. A port the
 * system hands out for `listen(0)` and closed again is back in that range, where any process's
 * outgoing connection (the suite's gRPC and pg clients, many test files at once) can take it as its
 * local port before the server binds it. Under `test:stress` a job's server found its port taken
 * that way, and in CI a dev server did.
 */
import { readFileSync } from 'node:fs';
import { isPortFree } from '../../system/ports';

const LOWEST_TEST_PORT = 20_000;
/** The first ephemeral port when /proc does not say (Linux's default range starts here). */
const DEFAULT_EPHEMERAL_LOWEST = 32_768;
// goalrun puts a dev server's Web UI at the frontend port + 1000: keep that one below the range too.
const ROOM_ABOVE = 1_000;
const MAX_TRIES = 1_000;

function ephemeralLowest(): number {
  try {
    const lowest = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]);
    return Number.isInteger(lowest) && lowest > LOWEST_TEST_PORT + 2 * ROOM_ABOVE
      ? lowest
      : DEFAULT_EPHEMERAL_LOWEST;
  } catch {
    return DEFAULT_EPHEMERAL_LOWEST;
  }
}

/** A loopback port below the ephemeral range (with room for +1000 above it) that was free a moment ago. */
export async function findFreePort(host = '127.0.0.1'): Promise<number> {
  const span = ephemeralLowest() - ROOM_ABOVE - LOWEST_TEST_PORT;
  for (let tries = 0; tries < MAX_TRIES; tries++) {
    const port = LOWEST_TEST_PORT + Math.floor(Math.random() * span);
    if (await isPortFree(port, host)) return port;
  }
  throw new Error(`no free port on ${host} between ${LOWEST_TEST_PORT} and ${LOWEST_TEST_PORT + span}`);
}
