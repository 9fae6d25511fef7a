/**
 * The HTML of `goalrun serve`: one page for every goal, grouped by state, and a page per goal with
 * its transcript. Plain server-rendered HTML with a little script; everything the model wrote is put
 * in the page as text (textContent, or escaped here), never as HTML: the model's output is hostile.
 */
import { GOAL_GROUPS, GROUP_TITLES } from '../../core/goal-groups';
import type { ServedGoal } from './goal-list';

/** Escapes text for HTML (element content and quoted attributes). */
export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const STYLE = `
body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:0.75rem;color:#1b1b1b}
h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:1.5rem;border-bottom:1px solid #ddd}
.goal{border:1px solid #ddd;border-radius:8px;padding:0.6rem;margin:0.5rem 0}
.needs_you .goal{border-color:#d97706;background:#fffbeb}
.meta{color:#555;font-size:0.9rem}.status{font-weight:600}
button{margin:0.25rem 0.25rem 0 0;padding:0.45rem 0.8rem;font-size:0.95rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f6f6;padding:0.6rem;border-radius:6px}
#message{color:#b91c1c}`;

/** The script shared by both pages: the token, the actions, and live updates over server-sent events. */
const SCRIPT = `
const token = document.querySelector('meta[name=goalrun-token]').content;
async function act(id, action) {
  let body = {};
  if (action === 'steer') { const text = prompt('Message for the goal'); if (!text) return; body = { text }; }
  if (action === 'deny') { body = { reason: prompt('Why (optional)') || undefined }; }
  if (action === 'limits') {
    const usd = prompt('New money cap in US dollars (empty: unchanged)');
    const steps = prompt('New step limit (empty: unchanged)');
    const minutes = prompt('New time limit in minutes (empty: unchanged)');
    body = { maxCostUsd: usd || undefined, maxSteps: steps || undefined, maxMinutes: minutes || undefined };
  }
  if (action === 'cancel' && !confirm('Cancel this goal?')) return;
  const res = await fetch('/api/goals/' + encodeURIComponent(id) + '/' + action, {
    method: 'POST', headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const answer = await res.json().catch(() => ({}));
  document.getElementById('message').textContent = res.ok ? (answer.text || 'done') : (answer.error || res.statusText);
  refresh();
}
function goalCard(goal) {
  const card = document.createElement('div');
  card.className = 'goal'; card.dataset.id = goal.sessionId; card.dataset.status = goal.status;
  const title = document.createElement('a');
  title.href = '/goals/' + encodeURIComponent(goal.sessionId) + '?token=' + token;
  title.textContent = (goal.name ? '[' + goal.name + '] ' : '') + goal.objective;
  const meta = document.createElement('div'); meta.className = 'meta';
  const cost = '$' + goal.costUsd.toFixed(4) + (goal.maxCostUsd != null ? ' of $' + goal.maxCostUsd.toFixed(4) : '');
  const status = document.createElement('span'); status.className = 'status'; status.textContent = goal.status;
  meta.append(status, ' · step ' + goal.steps + ' · ' + Math.round(goal.elapsedMs / 60000) + ' min · ' + cost);
  card.append(title, meta);
  for (const text of [goal.reason, goal.currentAction ? 'last: ' + goal.currentAction : null]) {
    if (!text) continue;
    const line = document.createElement('div'); line.className = 'meta'; line.textContent = text; card.append(line);
  }
  for (const action of goal.actions) {
    const button = document.createElement('button');
    button.textContent = action[0].toUpperCase() + action.slice(1);
    button.onclick = () => act(goal.sessionId, action);
    card.append(button);
  }
  return card;
}
async function refresh() {
  const list = document.getElementById('groups'); if (!list) return;
  const res = await fetch('/api/goals', { headers: { Authorization: 'Bearer ' + token } });
  if (!res.ok) return;
  const { goals } = await res.json();
  for (const section of list.querySelectorAll('section')) {
    const shown = goals.filter((goal) => goal.group === section.dataset.group);
    const box = section.querySelector('.goals'); box.replaceChildren(...shown.map(goalCard));
    section.querySelector('.count').textContent = String(shown.length);
  }
}
async function schedules() {
  const box = document.getElementById('schedules'); if (!box) return;
  const res = await fetch('/api/schedules', { headers: { Authorization: 'Bearer ' + token } });
  if (!res.ok) return;
  const rows = (await res.json()).schedules;
  box.replaceChildren(...rows.map((s) => {
    const line = document.createElement('div'); line.className = 'goal';
    line.textContent = s.name + ' · ' + s.spec + (s.paused ? ' · paused' : '') +
      (s.nextRuns && s.nextRuns[0] ? ' · next ' + s.nextRuns[0] : '') + (s.objective ? ' · ' + s.objective : '');
    return line;
  }));
  if (rows.length === 0) box.textContent = 'none (goalrun schedule add)';
}
schedules();
const events = new EventSource('/api/events?token=' + token);
events.addEventListener('goals', refresh);
refresh();`;

function shell(title: string, token: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="goalrun-token" content="${escapeHtml(token)}">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body>${body}<p id="message" role="status"></p><script>${SCRIPT}</script></body></html>`;
}

/** The page of every goal, grouped by state; the script fills the groups and keeps them live. */
export function goalsPage(token: string): string {
  const sections = GOAL_GROUPS.map(
    (group) =>
      `<section class="${group}" data-group="${group}"><h2>${GROUP_TITLES[group]} (<span class="count">…</span>)</h2><div class="goals"></div></section>`,
  ).join('');
  return shell(
    'goalrun',
    token,
    `<h1>goalrun</h1><div id="groups">${sections}</div><h2>Schedules</h2><div id="schedules" class="meta">…</div>`,
  );
}

/** The page of one goal: its state, its actions, its transcript as text, and a link to the Web UI. */
export function goalPage(token: string, goal: ServedGoal, transcript: string, webUi: string | null): string {
  const buttons = goal.actions
    .map(
      (action) =>
        `<button onclick="act(${escapeHtml(JSON.stringify(goal.sessionId))}, '${action}')">${action[0].toUpperCase()}${action.slice(1)}</button>`,
    )
    .join('');
  const body = `<p><a href="/?token=${escapeHtml(token)}">All goals</a></p>
<h1>${escapeHtml(goal.name ? `[${goal.name}] ${goal.objective}` : goal.objective)}</h1>
<p class="meta"><span class="status">${escapeHtml(goal.status)}</span> · step ${goal.steps} · $${goal.costUsd.toFixed(4)}${goal.maxCostUsd != null ? ` of $${goal.maxCostUsd.toFixed(4)}` : ''}</p>
${goal.reason ? `<p class="meta">${escapeHtml(goal.reason)}</p>` : ''}
<div>${buttons}</div>
${webUi ? `<p><a href="${escapeHtml(webUi)}">Temporal Web UI</a></p>` : ''}
<h2>Transcript</h2><pre id="transcript">${escapeHtml(transcript)}</pre>`;
  return shell(goal.objective, token, body);
}
