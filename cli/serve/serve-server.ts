/**
 * The HTTP server of `goalrun serve`. Every request needs the token: `Authorization: Bearer`, or for
 * a GET (a link opened on a phone) `?token=` or the cookie set by that link. An action is a POST with
 * the token in the Authorization header, which a page of another site cannot send: that is the
 * CSRF check, with the Origin, when the browser sends one, matching this server.
 */
import http from 'node:http';
import type { SessionStore } from '../../store/types';
import { type ServedGoal, servedGoal, servedGoals } from './goal-list';
import { actionArgs, BadAction, listSchedules, runAction } from './serve-actions';
import { goalPage, goalsPage } from './serve-page';
import { tokenMatches } from './serve-token';

/** How often the live view reads the store for changes (one read for every open page). */
export const SERVE_POLL_MS = 2_000;
/** Largest request body taken. */
const BODY_MAX_BYTES = 64 * 1024;
/** The cookie a token link sets, so the page's links work without the token in each. */
const COOKIE = 'goalrun_serve';

/** What the server needs from its process. */
export interface ServeDeps {
  token: string;
  store: SessionStore;
  /** The transcript of a goal as `goalrun transcript` prints it. */
  transcript(sessionId: string): Promise<string>;
  /** The goal's page in Temporal's Web UI, when one is known. */
  webUiUrl(sessionId: string): string | null;
}

/** Creates the server (not listening yet). */
export function createServeServer(deps: ServeDeps): http.Server {
  const live = new LiveGoals(deps.store);
  const server = http.createServer((req, res) => {
    handle(deps, live, req, res).catch((err) => {
      if (!res.headersSent) send(res, 500, { error: (err as Error).message });
      else res.end();
    });
  });
  server.on('close', () => live.stop());
  return server;
}

async function handle(deps: ServeDeps, live: LiveGoals, req: http.IncomingMessage, res: http.ServerResponse) {
  const url = new URL(req.url ?? '/', 'http://serve.invalid');
  const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  const linkToken = url.searchParams.get('token') ?? cookieOf(req.headers.cookie);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  if (req.method === 'POST') {
    if (!tokenMatches(deps.token, bearer)) {
      // A form of another site can send the cookie, never the header: refused as a cross-site request.
      if (tokenMatches(deps.token, linkToken))
        return send(res, 403, {
          error: 'an action needs the token in the Authorization header (CSRF check)',
        });
      return send(res, 401, { error: 'the token is missing or wrong' });
    }
    const origin = req.headers.origin;
    if (origin && origin !== `http://${req.headers.host}` && origin !== `https://${req.headers.host}`)
      return send(res, 403, { error: `a request from ${origin} is refused (CSRF check)` });
    const match = /^\/api\/goals\/([^/]+)\/([a-z]+)$/.exec(url.pathname);
    if (!match) return send(res, 404, { error: 'no such action' });
    let args: string[];
    try {
      args = actionArgs(match[2], decodeURIComponent(match[1]), await jsonBody(req));
    } catch (err) {
      if (err instanceof BadAction) return send(res, 400, { error: err.message });
      throw err;
    }
    const outcome = await runAction(args);
    live.changed();
    return send(res, outcome.ok ? 200 : 409, outcome.ok ? { text: outcome.text } : { error: outcome.text });
  }
  if (req.method !== 'GET') return send(res, 405, { error: 'GET or POST' });
  if (!tokenMatches(deps.token, bearer) && !tokenMatches(deps.token, linkToken))
    return send(res, 401, { error: 'the token is missing or wrong: open the URL goalrun serve printed' });
  if (url.searchParams.get('token'))
    res.setHeader('Set-Cookie', `${COOKIE}=${deps.token}; HttpOnly; SameSite=Strict; Path=/`);
  if (url.pathname === '/') return sendHtml(res, goalsPage(deps.token));
  if (url.pathname === '/api/goals') return send(res, 200, { goals: await servedGoals(deps.store) });
  if (url.pathname === '/api/events') return live.subscribe(req, res);
  if (url.pathname === '/api/schedules') return send(res, 200, { schedules: await listSchedules() });
  const api = /^\/api\/goals\/([^/]+)$/.exec(url.pathname);
  const page = /^\/goals\/([^/]+)$/.exec(url.pathname);
  const id = decodeURIComponent((api ?? page)?.[1] ?? '');
  if (!id) return send(res, 404, { error: 'not found' });
  const row = await deps.store.getSession(id);
  if (!row) return send(res, 404, { error: `no goal ${id}` });
  const goal = servedGoal(row);
  if (api) return send(res, 200, { ...goal, webUiUrl: deps.webUiUrl(id) });
  return sendHtml(res, goalPage(deps.token, goal, await deps.transcript(id), deps.webUiUrl(id)));
}

/**
 * Server-sent events of the goal list: the store is read every SERVE_POLL_MS while a page is open,
 * and an event goes out when a goal changed (its status or its last checkpoint).
 */
class LiveGoals {
  private readonly clients = new Set<http.ServerResponse>();
  private timer: NodeJS.Timeout | undefined;
  private digest = '';

  constructor(private readonly store: SessionStore) {}

  subscribe(req: http.IncomingMessage, res: http.ServerResponse): void {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    res.write(': goalrun\n\n');
    this.clients.add(res);
    req.on('close', () => {
      this.clients.delete(res);
      if (this.clients.size === 0) this.stop();
    });
    this.timer ??= setInterval(() => void this.poll(), SERVE_POLL_MS);
  }

  /** An action ran: tell the pages at the next read. */
  changed(): void {
    this.digest = '';
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    for (const client of this.clients) client.end();
    this.clients.clear();
  }

  private async poll(): Promise<void> {
    let goals: ServedGoal[];
    try {
      goals = await servedGoals(this.store);
    } catch {
      return; // The store is away: the pages keep what they show.
    }
    const digest = goals.map((goal) => `${goal.sessionId}:${goal.status}:${goal.updatedAt}`).join(',');
    if (digest === this.digest) return;
    this.digest = digest;
    for (const client of this.clients) client.write(`event: goals\ndata: ${goals.length}\n\n`);
  }
}

function cookieOf(header: string | undefined): string | null {
  for (const part of (header ?? '').split(';')) {
    const [key, value] = part.trim().split('=');
    if (key === COOKIE && value) return value;
  }
  return null;
}

async function jsonBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_MAX_BYTES) throw new BadAction(`the request body is over ${BODY_MAX_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8').trim();
  if (!text) return {};
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // Named below.
  }
  throw new BadAction('the request body must be a JSON object');
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify(body));
}

function sendHtml(res: http.ServerResponse, html: string): void {
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    // Only this page's own inline script runs: a tool output that looks like a script stays text anyway.
    'Content-Security-Policy':
      "default-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self'",
  });
  res.end(html);
}
