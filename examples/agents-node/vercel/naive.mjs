// naive.mjs: the Vercel AI SDK over the provider's MCP tools, with a scripted model (no LLM).
// The model calls create_refund (from mcpClient.tools()) with no idempotency key and, on
// anything but a succeeded refund (an error result, a timed-out call), calls it again with the
// same arguments, up to 3 tries.
import { generateText, isStepCount } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createMCPClient } from '@ai-sdk/mcp';

const env = process.env, log = (...a) => console.error('[naive]', ...a);
const timeoutMs = Number(env.REPLAYLAB_REQUEST_TIMEOUT_MS || 5000);
const mcp = await createMCPClient({ transport: { type: 'http', url: env.REPLAYLAB_MCP_URL,
  headers: env.REPLAYLAB_API_KEY ? { Authorization: `Bearer ${env.REPLAYLAB_API_KEY}` } : {} } });
const { create_refund } = await mcp.tools();

const say = (o) => ({ content: [{ type: 'text', text: JSON.stringify(o) }], finishReason: { unified: 'stop', raw: 'stop' } });
const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const it = JSON.parse(prompt.find((m) => m.role === 'user').content[0].text);
    const results = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content);
    const last = results.at(-1);
    let evidence = '';
    if (last) {
      log('model sees:', JSON.stringify(last));
      const text = last.output.type === 'content' ? last.output.value.map((p) => p.text).join('\n') : String(last.output.value);
      let r; try { r = JSON.parse(text); } catch {}
      if (r?.status === 'succeeded') return { ...say({ belief: 'done', refund: r.id }), usage };
      evidence = `try ${results.length}: ${r?.id ? `refund ${r.id} is ${r.status}` : text}`;
    }
    if (results.length >= 3) return { ...say({ belief: 'failed', evidence }), usage };
    const args = { intent: it.intent, charge: it.charge, amount: it.amount, currency: it.currency };
    return { content: [{ type: 'tool-call', toolCallId: `call-${results.length + 1}`, toolName: 'create_refund',
      input: JSON.stringify(args) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage };
  },
});

for (const it of JSON.parse(env.REPLAYLAB_INTENTS || '[]')) {
  const res = await generateText({ model, tools: { create_refund }, stopWhen: isStepCount(4),
    prompt: JSON.stringify(it), timeout: { toolMs: timeoutMs } });
  console.log(JSON.stringify({ intent: it.intent, ...JSON.parse(res.text) }));
}
await mcp.close();
