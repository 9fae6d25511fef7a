/**
 * Measures a workflow history the way the benchmarks report it: events, encoded and payload bytes,
 * activities by type, the largest payload, events and payload per model step, and where the time
 * went (from the event times).
 */
'use strict';

const { median } = require('./support');

/**
 * Events, encoded bytes and payload bytes of a history, the activities by type, the largest
 * payload, and per model step (from one model step's scheduling to the next one's) the events and
 * payload bytes, which is what issue 10 limits (≤ 13 events, ≤ 4 KiB).
 */
function measureHistory(history) {
  const { temporal } = require('@temporalio/proto');
  const { Payload } = temporal.api.common.v1;
  const eventTypeName = (type) =>
    (temporal.api.enums.v1.EventType[type] ?? String(type)).replace(/^EVENT_TYPE_/, '');
  const bytes = temporal.api.history.v1.History.encode(history).finish().length;
  const activities = {};
  let largest = { bytes: 0, where: 'none' };
  let payloadBytes = 0;
  const stepStarts = [];
  const payloadBefore = [];
  history.events.forEach((event, index) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const name = scheduled.activityType?.name ?? '?';
      activities[name] = (activities[name] ?? 0) + 1;
      if (name === 'modelStep') stepStarts.push(index);
    }
    payloadBefore.push(payloadBytes);
    forEachPayload(event, '', (payload, where) => {
      const size = payload.data.length;
      payloadBytes += size;
      const encoded = Payload.encode(payload).finish().length;
      if (encoded > largest.bytes) {
        largest = { bytes: encoded, where: `event ${index + 1} ${eventTypeName(event.eventType)} ${where}` };
      }
    });
  });
  const perStep = [];
  const phases = phaseDurations(history.events, temporal);
  for (let i = 0; i + 1 < stepStarts.length; i++) {
    perStep.push({
      events: stepStarts[i + 1] - stepStarts[i],
      payloadBytes: payloadBefore[stepStarts[i + 1]] - payloadBefore[stepStarts[i]],
    });
  }
  return { events: history.events.length, bytes, payloadBytes, activities, largest, perStep, phases };
}

/**
 * Where the time goes, from the event timestamps: each workflow task (started to completed, which is
 * the worker's activation plus a round trip), each activity by type (started to completed), and the
 * gaps the server adds (scheduled to started). Medians in ms.
 */
function phaseDurations(events, temporal) {
  const { EventType } = temporal.api.enums.v1;
  const at = (event) => Number(event.eventTime.seconds) * 1000 + event.eventTime.nanos / 1e6;
  const scheduled = new Map();
  const started = new Map();
  const durations = {};
  const add = (name, ms) => {
    durations[name] ??= [];
    durations[name].push(ms);
  };
  let workflowTaskScheduled = 0;
  let workflowTaskStarted = 0;
  for (const event of events) {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
        workflowTaskScheduled = at(event);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED:
        workflowTaskStarted = at(event);
        add('workflow task: scheduled → started', workflowTaskStarted - workflowTaskScheduled);
        break;
      case EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
        add('workflow task: started → completed', at(event) - workflowTaskStarted);
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED: {
        const name = event.activityTaskScheduledEventAttributes.activityType?.name ?? '?';
        scheduled.set(String(event.eventId), { name, at: at(event) });
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED: {
        const id = String(event.activityTaskStartedEventAttributes.scheduledEventId);
        const task = scheduled.get(id);
        if (task) {
          started.set(id, at(event));
          add(`${task.name}: scheduled → started`, at(event) - task.at);
        }
        break;
      }
      case EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: {
        const id = String(event.activityTaskCompletedEventAttributes.scheduledEventId);
        const task = scheduled.get(id);
        if (task && started.has(id)) add(`${task.name}: started → completed`, at(event) - started.get(id));
        break;
      }
    }
  }
  return Object.fromEntries(Object.entries(durations).map(([name, list]) => [name, median(list)]));
}

/** Calls `visit` for every Payload (an object with binary `data` and `metadata`) under `value`. */
function forEachPayload(value, where, visit) {
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return;
  if (ArrayBuffer.isView(value.data) && value.metadata && typeof value.metadata === 'object') {
    visit(value, where);
    return;
  }
  for (const [key, child] of Object.entries(value)) {
    forEachPayload(child, Array.isArray(value) ? `${where}[${key}]` : where ? `${where}.${key}` : key, visit);
  }
}

module.exports = { measureHistory };
