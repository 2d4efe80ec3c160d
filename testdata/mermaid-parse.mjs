import { JSDOM } from 'jsdom';
import fs from 'fs';
const dom = new JSDOM('<!DOCTYPE html><body></body>', { pretendToBeVisual: true });
globalThis.window = dom.window; globalThis.document = dom.window.document;
globalThis.DOMPurify = undefined;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });
const text = fs.readFileSync(0, 'utf8');
const blocks = [...text.matchAll(/```mermaid\n([\s\S]*?)```/g)].map(m => m[1]);
let ok = 0;
for (const b of blocks) {
  try { const r = await mermaid.parse(b); ok++; }
  catch (e) { console.error('FAIL', e.message, '\n', b); process.exit(1); }
}
console.log(`parsed ${ok} of ${blocks.length} diagrams`);
