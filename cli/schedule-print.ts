/** How `schedule show` and `schedule add` print a schedule, and `schedule list` its one line. */
import { formatDuration, say } from './output';
import type { FiringView, ScheduleView } from './schedule-view';

/** A firing in one line: its goal (or workflow, before the goal has a session) and its status. */
export function firingText(firing: FiringView): string {
  return `${firing.goal ?? firing.workflowId} ${firing.status}`;
}

/** The whole schedule, as `show` prints it. */
export function printSchedule(view: ScheduleView): void {
  say(`schedule ${view.name}${view.paused ? ' (paused)' : ''}  ${view.scheduleId}`);
  say(`  spec:       ${view.spec}`);
  say(`  overlap:    ${view.overlap}; catch-up window ${formatDuration(view.catchupWindowMs)}`);
  if (view.objective !== null) say(`  objective:  ${view.objective.replace(/\s+/g, ' ')}`);
  if (view.workspace !== null) say(`  workspace:  ${view.workspace}`);
  if (view.model !== null) say(`  model:      ${view.model}`);
  if (view.paused && view.note) say(`  note:       ${view.note}`);
  say(`  next runs:  ${view.paused ? 'none while paused' : view.nextRuns.join(', ') || 'none'}`);
  const { taken, skippedOverlap, missedCatchupWindow } = view.counts;
  say(
    `  firings:    ${taken} started, ${skippedOverlap} skipped while a goal ran, ${missedCatchupWindow} missed (server down past the catch-up window)`,
  );
  for (const firing of view.running) say(`  running:    ${firingText(firing)}`);
  if (view.recent.length === 0) say('  goals:      none yet');
  for (const firing of [...view.recent].reverse())
    say(`  goal:       ${firing.scheduledAt}  ${firingText(firing)}`);
}

/** The header and rows of `list`. */
export function printScheduleList(views: ScheduleView[]): void {
  if (views.length === 0) {
    say('no schedules in this store; goalrun schedule add --help shows how to add one');
    return;
  }
  const rows = views.map((view) => [
    view.name,
    view.spec,
    view.paused ? '-' : (view.nextRuns[0] ?? '-'),
    view.recent.at(-1) ? firingText(view.recent.at(-1) as FiringView) : '-',
    view.paused ? 'paused' : '',
  ]);
  const header = ['NAME', 'SPEC', 'NEXT RUN', 'LAST GOAL', 'PAUSED'];
  const widths = header.map((title, index) =>
    Math.max(title.length, ...rows.map((row) => row[index].length)),
  );
  for (const row of [header, ...rows])
    say(
      row
        .map((cell, index) => cell.padEnd(widths[index]))
        .join('  ')
        .trimEnd(),
    );
}
