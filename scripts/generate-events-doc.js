#!/usr/bin/env node
// Writes docs/events.md from the event-stream schemas (build first: npm run build).
const fs = require('node:fs');
const path = require('node:path');
const { renderEventsDoc } = require('../dist/core/stream-events-doc');

const target = path.resolve(__dirname, '../docs/events.md');
fs.writeFileSync(target, renderEventsDoc());
console.log(`wrote ${path.relative(process.cwd(), target)}`);
