/**
 * Local TCP ports: one the system says is free, and whether a given one is. Either answer holds only
 * for a moment (another process can bind the port next), so callers that then start a server handle
 * EADDRINUSE themselves. The probing servers never keep the process alive.
 */
import { createServer } from 'node:net';

/** A port on `host` that was free a moment ago (the system's choice). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject(new Error(`no free port on ${host}`)),
      );
    });
  });
}

/** Whether `port` on `host` could be bound a moment ago. */
export function isPortFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}
