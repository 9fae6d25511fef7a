/**
 * Store keys are durable contracts: rows written by an older build are found again by a newer one only
 * if every key keeps its exact bytes. Each builder's output is pinned here, and no other non-test source
 * file builds a key by hand (issue 9: "store keys are written in five places; give them one home").
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { userKindOf } from '../../core/ledger-entry';
import {
  executionOfKey,
  FIRST_MESSAGE_KEY,
  KEY_PREFIX,
  SESSION_OPENED_EVENT_KEY,
  storeKeys,
} from '../../core/store-keys';

const ROOT = path.resolve(__dirname, '../..');

describe('store keys keep their exact form', () => {
  it('messages', () => {
    expect(FIRST_MESSAGE_KEY).toBe('initial');
    expect(storeKeys.assistant(2, 7)).toBe('step:7@2');
    expect(storeKeys.toolResult('call_1_0')).toBe('result:call_1_0');
    expect(storeKeys.continuation(3, 4)).toBe('continue:4@3');
    expect(storeKeys.resume(5)).toBe('resume:5');
    expect(storeKeys.notice(2, 9)).toBe('notice:9@2');
    expect(storeKeys.summary(3)).toBe('summary:3');
    expect(storeKeys.summaryForSpan(3, 12, 40)).toBe('summary:3~12-40');
    expect(storeKeys.steering('abc-1')).toBe('steer:abc-1');
    expect(storeKeys.resumeSteeringId(4)).toBe('resume-4');
    expect(storeKeys.steering(storeKeys.resumeSteeringId(4))).toBe('steer:resume-4');
  });

  it('events', () => {
    expect(SESSION_OPENED_EVENT_KEY).toBe('opened');
    expect(storeKeys.sessionResumedEvent(2)).toBe('resumed@2');
    expect(storeKeys.toolEvent('call_1_0')).toBe('tool:call_1_0');
    expect(storeKeys.taskUpdateEvent('call_1_0')).toBe('tasks:call_1_0');
    expect(storeKeys.usageEvent(2, 7)).toBe('usage:7@2');
    expect(storeKeys.stepStartEvent(2, 7)).toBe('step-start:7@2');
    expect(storeKeys.modelErrorEvent(2, 7, 1)).toBe('model-error:7@2#1');
    expect(storeKeys.summaryUsageEvent(3)).toBe('summary-usage:3');
    expect(storeKeys.approvalEvent('call_2_0')).toBe('approval:call_2_0');
    expect(storeKeys.approvalRequestedEvent('call_2_0')).toBe('approval:call_2_0:requested');
    expect(storeKeys.commandEvent('req-9')).toBe('command:req-9');
    expect(storeKeys.keptProgressEvent(3)).toBe('kept-progress@3');
    expect(storeKeys.goalEnded(3)).toBe('end:3');
    expect(storeKeys.contextNoticeEvent(2, 0)).toBe('context-notice:2:0');
    expect(storeKeys.nestedInstructionsEvent('lib/AGENTS.md')).toBe('nested-instructions:lib/AGENTS.md');
    expect(storeKeys.hookEvent('pre_tool', 'call_1_0', 1)).toBe('hook:pre_tool:call_1_0:1');
    expect(storeKeys.notificationDelivery('goal-x', 2, 9, 'stalled')).toBe('notify:goal-x:2:9:stalled');
    expect(storeKeys.notificationUndeliveredEvent('notify:goal-x:2:9:stalled', 1)).toBe(
      'notify:goal-x:2:9:stalled:1:undelivered',
    );
  });

  it('spool rows', () => {
    expect(storeKeys.spool('call_1_0')).toBe('call_1_0');
    expect(storeKeys.spoolBeside('call_1_0', 'lx3k9')).toBe('call_1_0@lx3k9');
    expect(storeKeys.spoolPart('call_1_0', 2)).toBe('call_1_0:part:2');
  });

  it('the execution of a key, and who wrote a user message, read back from the key', () => {
    expect(executionOfKey(storeKeys.assistant(3, 1))).toBe(3);
    expect(executionOfKey(storeKeys.resume(4))).toBe(4);
    expect(executionOfKey(storeKeys.notice(2, 5))).toBe(2);
    expect(executionOfKey(FIRST_MESSAGE_KEY)).toBe(1);
    expect(executionOfKey(storeKeys.toolResult('call_1_0'))).toBe(1);
    expect(userKindOf(FIRST_MESSAGE_KEY)).toBe('first');
    expect(userKindOf(storeKeys.continuation(1, 2))).toBe('continuation');
    expect(userKindOf(storeKeys.resume(2))).toBe('resume');
    expect(userKindOf(storeKeys.summary(1))).toBe('summary');
    expect(userKindOf(storeKeys.summaryForSpan(1, 2, 3))).toBe('summary');
    expect(userKindOf(storeKeys.steering('x'))).toBe('steering');
    expect(userKindOf(storeKeys.notice(1, 1))).toBe('continuation');
  });
});

/** Every .ts file under a folder. */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return full.endsWith('.ts') ? [full] : [];
  });
}

describe('store keys have one home', () => {
  // A string or template literal that starts like a key: `approval:${…}`, 'summary:', `resumed@${…}`.
  const keyWords = [
    ...Object.values(KEY_PREFIX).map((prefix) => prefix.slice(0, -1)),
    'tool',
    'tasks',
    'usage',
    'step-start',
    'model-error',
    'summary-usage',
    'approval',
    'command',
    'kept-progress',
    'resumed',
    'end',
  ];
  const literal = new RegExp(`[\`'"](${keyWords.join('|')})[:@](\\$\\{|[\`'"])`);

  it('no non-test source builds or matches a key by hand outside core/store-keys.ts', () => {
    const offenders: string[] = [];
    for (const folder of ['activities', 'workflows', 'core', 'store', 'worker', 'cli']) {
      for (const file of sourceFiles(path.join(ROOT, folder))) {
        if (file.endsWith(path.join('core', 'store-keys.ts'))) continue;
        readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (literal.test(line)) offenders.push(`${path.relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the scan recognizes the literals it is meant to catch', () => {
    // `<open>` stands for the placeholder opener, so the linter does not take these lines for templates.
    for (const line of [
      'key: `approval:<open>call.toolCallId}`,',
      "entry.key.startsWith('summary:')",
      'key: `resumed@<open>this.execution}`,',
      'host.appendMessage(`notice:<open>n}`, text)',
      '`summary-usage:<open>input.compaction}`',
    ].map((line) => line.replaceAll('<open>', '$' + '{'))) {
      expect(literal.test(line), line).toBe(true);
    }
    expect(literal.test("throw new AppCommandError('usage: /rename NAME')")).toBe(false);
  });
});
