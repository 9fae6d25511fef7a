/**
 * estimator-samples: deterministic text samples of the content types a goal's context holds, for
 * comparing core/tokens.ts's estimate with a real tokenizer. Shared by scripts/measure-estimator.js
 * and test/core/tokens.test.ts so that the figures printed and the band asserted are about the same
 * text. Everything is generated here from a seeded PRNG and a few embedded sentences: no downloads.
 *
 * Plain CommonJS JavaScript: scripts/ is not part of the TypeScript build, and the test loads it with
 * createRequire.
 */
'use strict';

/** Content types in the order the report lists them. */
const CONTENT_TYPES = [
  'english-prose',
  'typescript',
  'json-minified',
  'json-pretty',
  'shell-logs',
  'hex-and-ids',
  'chinese',
  'russian',
  'other-scripts',
  'emoji-mixed',
];

/** mulberry32: a tiny seeded PRNG, so every run measures the very same text. */
function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick(rand, list) {
  return list[Math.floor(rand() * list.length)];
}

function int(rand, min, max) {
  return min + Math.floor(rand() * (max - min + 1));
}

function hex(rand, length) {
  let out = '';
  for (let i = 0; i < length; i++) out += '0123456789abcdef'[Math.floor(rand() * 16)];
  return out;
}

function base64(rand, length) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(rand() * alphabet.length)];
  return out;
}

function uuid(rand) {
  return `${hex(rand, 8)}-${hex(rand, 4)}-4${hex(rand, 3)}-${pick(rand, ['8', '9', 'a', 'b'])}${hex(rand, 3)}-${hex(rand, 12)}`;
}

/** Appends pieces until the text reaches `targetChars`. */
function fill(targetChars, next) {
  let text = '';
  while (text.length < targetChars) text += next();
  return text;
}

const PROSE_SENTENCES = [
  'The workflow keeps its state in durable history, so a worker that crashes halfway through a step loses nothing.',
  'When the context window fills up, older tool outputs are replaced with short stubs that point at the spool.',
  "It's worth noting that the summarizer sees edits, commands and error output, but never the raw stream text.",
  'Most people underestimate how quickly a long-running agent burns through its budget on repeated file reads.',
  'We measured the overhead of each step against a bare workflow that runs the same number of activities.',
  'If the provider reports an overflow, the runtime compacts the history once and retries the request.',
  'Nevertheless, a careful reviewer should double-check the migration before it reaches production.',
  'Her explanation was straightforward: the cache had been invalidated by an unrelated configuration change.',
  'A thoughtful design accommodates unexpected circumstances without sacrificing readability or performance.',
  'The committee postponed its decision until the environmental assessment had been independently verified.',
  'Yesterday afternoon, the team discovered that the nightly build had silently skipped three integration suites.',
  'Quantitative estimates are only as trustworthy as the assumptions, measurements and sampling behind them.',
];

const PROSE_WORDS = (
  'the of and to in is that it was for on are as with his they at be this from have or by one had not but ' +
  'what all were when we there can an your which their said if do will each about how up out them then she ' +
  'many some so these would other into has more her two like him see time could no make than first been its ' +
  'who now people my made over did down only way find use may water long little very after words called just ' +
  'where most know get through back much before go good new write our used me man too any day same right look ' +
  'think also around another came come work three must because does part even place well such here take why ' +
  'help put different away again off went old number great tell men say small every found still between name ' +
  'should home big give air line set own under read last never us left end along while might next sound below ' +
  'saw something thought both few those always show large often together asked house world going want school ' +
  'important until form food keep children feet land side without boy once animal life enough took sometimes ' +
  'architecture reliability throughput deterministic idempotent reconciliation heterogeneous infrastructure ' +
  'approximately counterintuitive documentation serialization asynchronous authentication observability ' +
  'parliamentary photosynthesis archaeological entrepreneurship mischievous bureaucracy kaleidoscope'
).split(' ');

function englishProse(rand, targetChars) {
  return fill(targetChars, () => {
    if (rand() < 0.4) return `${pick(rand, PROSE_SENTENCES)} `;
    const words = [];
    const count = int(rand, 6, 22);
    for (let i = 0; i < count; i++) words.push(pick(rand, PROSE_WORDS));
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    if (count > 10 && rand() < 0.5) words[int(rand, 3, count - 4)] += ',';
    const end = pick(rand, ['.', '.', '.', '?', '!']);
    return `${words.join(' ')}${end}${rand() < 0.15 ? '\n\n' : ' '}`;
  });
}

const IDENT_PARTS = [
  'goal',
  'step',
  'tool',
  'result',
  'usage',
  'budget',
  'context',
  'window',
  'message',
  'history',
  'spool',
  'task',
  'graph',
  'worker',
  'session',
  'store',
  'compact',
  'summary',
  'threshold',
  'provider',
  'request',
  'response',
  'token',
  'estimate',
  'ledger',
  'entry',
  'state',
  'config',
];

function identifier(rand, upperFirst) {
  const parts = [];
  const count = int(rand, 1, 3);
  for (let i = 0; i < count; i++) {
    const part = pick(rand, IDENT_PARTS);
    parts.push(i === 0 && !upperFirst ? part : part[0].toUpperCase() + part.slice(1));
  }
  return parts.join('');
}

function typescriptCode(rand, targetChars) {
  const blocks = [
    () =>
      `import { ${identifier(rand, false)}, type ${identifier(rand, true)} } from '../core/${pick(rand, IDENT_PARTS)}';\n`,
    () => {
      const name = identifier(rand, true);
      let out = `/** The ${pick(rand, IDENT_PARTS)} of one ${pick(rand, IDENT_PARTS)}, as the workflow keeps it. */\nexport interface ${name} {\n`;
      const fields = int(rand, 2, 6);
      for (let i = 0; i < fields; i++) {
        out += `  ${identifier(rand, false)}${rand() < 0.3 ? '?' : ''}: ${pick(rand, ['number', 'string', 'boolean', 'string[]', `${identifier(rand, true)} | undefined`, 'Record<string, number>'])};\n`;
      }
      return `${out}}\n\n`;
    },
    () => {
      const fn = identifier(rand, false);
      const arg = identifier(rand, false);
      const type = identifier(rand, true);
      return (
        `export async function ${fn}(${arg}: ${type}, limit = ${int(rand, 1, 5000)}): Promise<${type}[]> {\n` +
        `  const out: ${type}[] = [];\n` +
        `  for (let i = 0; i < ${arg}.items.length && out.length < limit; i++) {\n` +
        `    const item = ${arg}.items[i];\n` +
        `    if (item.${identifier(rand, false)} === undefined) continue;\n` +
        `    // Skip entries the ${pick(rand, IDENT_PARTS)} already saw: a replayed activity repeats them.\n` +
        `    if (seen.has(item.id)) throw new Error(\`duplicate \${item.id} in ${fn}\`);\n` +
        `    out.push({ ...item, ${identifier(rand, false)}: Math.max(0, item.${identifier(rand, false)} - ${int(rand, 1, 99)}) });\n` +
        `  }\n` +
        `  return out;\n}\n\n`
      );
    },
    () =>
      `const ${identifier(rand, false).toUpperCase()}_MS = ${int(rand, 1, 60)} * 60_000;\n` +
      `export const ${identifier(rand, false)} = (${identifier(rand, false)}: number): boolean => ${identifier(rand, false)} >= ${int(rand, 0, 100)} && !Number.isNaN(x);\n\n`,
    () =>
      `switch (${identifier(rand, false)}.kind) {\n  case '${pick(rand, IDENT_PARTS)}':\n    return { ok: true, value: ${identifier(rand, false)}?.${identifier(rand, false)} ?? null };\n  default:\n    throw new ConfigError(\`unknown kind "\${x.kind}"\`);\n}\n`,
  ];
  return fill(targetChars, () => pick(rand, blocks)());
}

function jsonRecords(rand, count) {
  const records = [];
  for (let i = 0; i < count; i++) {
    records.push({
      id: i + 1,
      uuid: uuid(rand),
      name: `${pick(rand, IDENT_PARTS)}-${int(rand, 1, 999)}`,
      ok: rand() < 0.7,
      score: Math.round(rand() * 100000) / 1000,
      tags: [pick(rand, IDENT_PARTS), pick(rand, IDENT_PARTS)],
      at: new Date(
        Date.UTC(2025, int(rand, 0, 11), int(rand, 1, 28), int(rand, 0, 23), int(rand, 0, 59)),
      ).toISOString(),
      meta: {
        a: int(rand, 0, 9),
        b: rand() < 0.5 ? null : int(rand, 100, 99999),
        c: [int(rand, 0, 9), int(rand, 0, 9)],
      },
      x: int(rand, -500, 500),
    });
  }
  return records;
}

function jsonMinified(rand, targetChars) {
  return JSON.stringify(jsonRecords(rand, Math.ceil(targetChars / 260))).slice(0, targetChars);
}

function jsonPretty(rand, targetChars) {
  return JSON.stringify(jsonRecords(rand, Math.ceil(targetChars / 420)), null, 2).slice(0, targetChars);
}

function shellLogs(rand, targetChars) {
  const lines = [
    () =>
      `${new Date(Date.UTC(2025, 0, 15, 14, int(rand, 0, 59), int(rand, 0, 59), int(rand, 0, 999))).toISOString()} ${pick(rand, ['INFO', 'WARN', 'ERROR', 'DEBUG'])} [worker-${int(rand, 1, 8)}] ${pick(rand, ['GET', 'POST', 'PUT'])} /api/v1/${pick(rand, IDENT_PARTS)}s/${int(rand, 1, 99999)} ${pick(rand, [200, 201, 204, 400, 404, 500])} ${int(rand, 1, 900)}ms`,
    () =>
      `npm warn deprecated ${pick(rand, IDENT_PARTS)}@${int(rand, 1, 9)}.${int(rand, 0, 20)}.${int(rand, 0, 9)}: this package is no longer supported`,
    () =>
      `    at ${identifier(rand, true)}.${identifier(rand, false)} (/app/dist/${pick(rand, IDENT_PARTS)}/${pick(rand, IDENT_PARTS)}.js:${int(rand, 1, 900)}:${int(rand, 1, 80)})`,
    () => `--- FAIL: Test${identifier(rand, true)} (${(rand() * 3).toFixed(2)}s)`,
    () =>
      `    ${pick(rand, IDENT_PARTS)}_test.go:${int(rand, 10, 400)}: expected ${int(rand, 0, 100)}, got ${int(rand, 0, 100)}`,
    () =>
      `ok  \tgithub.com/acme/${pick(rand, IDENT_PARTS)}/internal/${pick(rand, IDENT_PARTS)}\t${(rand() * 9).toFixed(3)}s`,
    () =>
      `-rw-r--r--  1 node node ${int(rand, 10, 999999).toString().padStart(8)} Jan ${int(rand, 1, 28)} 14:${int(rand, 10, 59)} ${pick(rand, IDENT_PARTS)}.${pick(rand, ['ts', 'js', 'json', 'md'])}`,
    () => `commit ${hex(rand, 40)}\nAuthor: Dev ${int(rand, 1, 9)} <dev${int(rand, 1, 9)}@example.com>`,
    () =>
      `$ ${pick(rand, ['git status --short', 'npx vitest run', 'go test ./...', 'ls -la src/', 'docker compose ps'])}`,
    () => ` M ${pick(rand, IDENT_PARTS)}/${pick(rand, IDENT_PARTS)}-${pick(rand, IDENT_PARTS)}.ts`,
  ];
  return fill(targetChars, () => `${pick(rand, lines)()}\n`);
}

function hexAndIds(rand, targetChars) {
  return fill(targetChars, () => {
    switch (int(rand, 0, 3)) {
      case 0:
        return `sha256-${base64(rand, 43)}=\n`;
      case 1:
        return `${hex(rand, 40)} refs/heads/${pick(rand, IDENT_PARTS)}\n`;
      case 2:
        return `"${uuid(rand)}": ${int(rand, 0, 1e9)},\n`;
      default:
        return `integrity ${base64(rand, 86)}==\n`;
    }
  });
}

const CHINESE_SENTENCES = [
  '工作流会把状态保存在持久化的历史记录中，所以即使工作进程在执行途中崩溃，也不会丢失任何数据。',
  '当上下文窗口快满的时候，旧的工具输出会被替换成指向缓存文件的简短说明。',
  '我们测量了每一步的额外开销，并与只运行相同数量活动的基础工作流进行了比较。',
  '如果服务提供方报告上下文溢出，运行时会先压缩一次历史记录，然后重新发送请求。',
  '昨天下午，团队发现夜间构建悄悄跳过了三个集成测试套件。',
  '这个设计考虑了意外情况，同时没有牺牲可读性和性能。',
  '请在把数据库迁移部署到生产环境之前，再仔细检查一遍。',
  '北京的秋天天气晴朗，很多人喜欢在周末去公园散步、拍照和野餐。',
  '他说这个问题其实很简单：缓存被一个无关的配置修改弄失效了。',
  '模型的成本按照每百万个词元计算，输入和输出的价格并不相同。',
];

const CHINESE_CHARS =
  '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严';

function chinese(rand, targetChars) {
  return fill(targetChars, () => {
    if (rand() < 0.5) return pick(rand, CHINESE_SENTENCES);
    let sentence = '';
    const count = int(rand, 8, 30);
    for (let i = 0; i < count; i++) sentence += pick(rand, [...CHINESE_CHARS]);
    return `${sentence}${pick(rand, ['。', '，', '？', '！', '；'])}`;
  });
}

const RUSSIAN_SENTENCES = [
  'Рабочий процесс хранит своё состояние в долговечной истории, поэтому сбой исполнителя ничего не теряет.',
  'Когда контекстное окно заполняется, старые результаты инструментов заменяются короткими ссылками.',
  'Мы измерили накладные расходы каждого шага и сравнили их с простым процессом из тех же действий.',
  'Если провайдер сообщает о переполнении, среда выполнения один раз сжимает историю и повторяет запрос.',
  'Вчера вечером команда обнаружила, что ночная сборка незаметно пропустила три набора интеграционных тестов.',
  'Пожалуйста, внимательно проверьте миграцию базы данных перед развёртыванием в рабочую среду.',
  'Осенью в Москве часто идут дожди, но в выходные многие всё равно гуляют по паркам и набережным.',
];

const RUSSIAN_WORDS = (
  'и в не на я быть он с что а по это она этот к но они мы как из у который то за свой что весь год от так о ' +
  'для ты же все тот мочь вы человек такой его сказать только или ещё бы себя один как уже до время если сам ' +
  'когда другой вот говорить наш мой знать стать при чтобы дело жизнь кто первый очень два день её новый рука ' +
  'даже во со раз где там под можно ну какой после их работа без самый потом надо хотеть ли слово идти большой ' +
  'должен место иметь ничто сейчас тут лицо каждый друг нет теперь ни глаз тоже тогда видеть вопрос через да ' +
  'здесь дом сделать производительность инфраструктура ответственность конфигурация последовательность'
).split(' ');

function russian(rand, targetChars) {
  return fill(targetChars, () => {
    if (rand() < 0.5) return `${pick(rand, RUSSIAN_SENTENCES)} `;
    const words = [];
    const count = int(rand, 5, 18);
    for (let i = 0; i < count; i++) words.push(pick(rand, RUSSIAN_WORDS));
    words[0] = words[0][0].toUpperCase() + words[0].slice(1);
    return `${words.join(' ')}${pick(rand, ['.', '.', '?', '!'])} `;
  });
}

/** The same kind of sentence in Japanese, Korean, Arabic, Hindi, Greek, Thai and Hebrew. */
const OTHER_SCRIPT_SENTENCES = [
  'ワークフローは状態を永続的な履歴に保存するので、ワーカーが途中でクラッシュしても何も失われません。',
  '昨日の午後、チームは夜間ビルドが三つの統合テストを黙って飛ばしていたことに気づきました。',
  '워크플로는 상태를 영구 기록에 저장하므로 작업자가 중간에 중단되어도 아무것도 잃지 않습니다.',
  '어제 오후 팀은 야간 빌드가 통합 테스트 세 개를 조용히 건너뛴 것을 발견했습니다.',
  'يحتفظ سير العمل بحالته في سجل دائم، لذلك لا يفقد العامل أي شيء إذا توقف في منتصف الخطوة.',
  'اكتشف الفريق بعد ظهر أمس أن البناء الليلي تخطى ثلاث مجموعات من اختبارات التكامل.',
  'वर्कफ़्लो अपनी स्थिति को स्थायी इतिहास में सहेजता है, इसलिए बीच में रुकने पर भी कुछ नहीं खोता।',
  'कल दोपहर टीम ने पाया कि रात की बिल्ड ने तीन एकीकरण परीक्षण चुपचाप छोड़ दिए थे।',
  'Η ροή εργασίας διατηρεί την κατάστασή της σε μόνιμο ιστορικό, οπότε τίποτα δεν χάνεται αν ο εργάτης σταματήσει.',
  'เวิร์กโฟลว์เก็บสถานะไว้ในประวัติถาวร ดังนั้นหากเวิร์กเกอร์หยุดทำงานกลางคันก็จะไม่สูญเสียอะไรเลย',
  'זרימת העבודה שומרת את מצבה בהיסטוריה קבועה, כך ששום דבר לא הולך לאיבוד אם העובד נעצר באמצע.',
];

function otherScripts(rand, targetChars) {
  return fill(targetChars, () => `${pick(rand, OTHER_SCRIPT_SENTENCES)}${rand() < 0.2 ? '\n' : ' '}`);
}

const EMOJI = [
  '😀',
  '🚀',
  '✅',
  '❌',
  '🔥',
  '👍🏽',
  '👩‍💻',
  '🇩🇪',
  '🇯🇵',
  '🎉',
  '⚠️',
  '🐛',
  '📦',
  '💡',
  '🙏',
  '👨‍👩‍👧‍👦',
  '🏳️‍🌈',
  '🤖',
  '⭐',
  '📈',
];

function emojiMixed(rand, targetChars) {
  return fill(targetChars, () => {
    let out = '';
    const count = int(rand, 1, 4);
    for (let i = 0; i < count; i++) out += pick(rand, EMOJI);
    const words = [];
    const wordCount = int(rand, 0, 6);
    for (let i = 0; i < wordCount; i++) words.push(pick(rand, PROSE_WORDS));
    return `${out} ${words.join(' ')}${rand() < 0.3 ? '\n' : ' '}`;
  });
}

const GENERATORS = {
  'english-prose': englishProse,
  typescript: typescriptCode,
  'json-minified': jsonMinified,
  'json-pretty': jsonPretty,
  'shell-logs': shellLogs,
  'hex-and-ids': hexAndIds,
  chinese,
  russian,
  'other-scripts': otherScripts,
  'emoji-mixed': emojiMixed,
};

/**
 * `count` samples of each content type, each about `chars` characters long (the first a little
 * shorter, so that short texts are covered too). Same arguments, same text.
 */
function buildSamples(options = {}) {
  const count = options.count ?? 12;
  const chars = options.chars ?? 4000;
  const samples = [];
  CONTENT_TYPES.forEach((type, typeIndex) => {
    const rand = prng(0x5eed + typeIndex * 7919);
    for (let i = 0; i < count; i++) {
      const target = i === 0 ? Math.max(200, Math.floor(chars / 10)) : chars;
      samples.push({ type, text: GENERATORS[type](rand, target) });
    }
  });
  return samples;
}

module.exports = { CONTENT_TYPES, buildSamples };
