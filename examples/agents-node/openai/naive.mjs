// naive.mjs: the OpenAI Agents SDK over the provider's MCP tools, as its own
// MCP client (MCPServerStreamableHttp) exposes them, with a scripted model
// (no LLM). The model calls create_refund with no idempotency key and, on
// anything but a succeeded refund (an error result, a timed-out call),
// calls it again with the same arguments, up to 3 tries.
import { Agent, run, MCPServerStreamableHttp, setTracingDisabled } from '@openai/agents';
import { ScriptedModel, callTool, outputText, say, textOf } from './model.mjs';

setTracingDisabled(true); // no trace export: nothing leaves the machine but the MCP calls
const env = process.env;
const mcp = new MCPServerStreamableHttp({
  name: 'replaylab',
  url: env.REPLAYLAB_MCP_URL,
  requestInit: env.REPLAYLAB_API_KEY ? { headers: { Authorization: `Bearer ${env.REPLAYLAB_API_KEY}` } } : undefined,
  // the tool-call timeout in ms; unset, the SDK's default (60 s) applies
  ...(env.REPLAYLAB_REQUEST_TIMEOUT_MS ? { timeout: Number(env.REPLAYLAB_REQUEST_TIMEOUT_MS) } : {}),
});
await mcp.connect();

const script = (items) => {
  const it = JSON.parse(textOf(items.find((m) => m.role === 'user')));
  const tries = items.filter((m) => m.type === 'function_call_result');
  let r = null, text = '';
  if (tries.length) {
    text = outputText(tries.at(-1).output);
    try { r = JSON.parse(text); } catch {}
  }
  if (r?.object === 'refund' && r.status === 'succeeded') return [say(JSON.stringify({ intent: it.intent, belief: 'done', refund: r.id }))];
  if (tries.length < 3) {
    const args = { intent: it.intent, charge: it.charge, amount: it.amount, currency: it.currency };
    return [callTool('create_refund', args, `call_${tries.length + 1}`)];
  }
  const evidence = `try 3: ${r?.id ? `refund ${r.id} is ${r.status}` : text.slice(0, 200)}`;
  return [say(JSON.stringify({ intent: it.intent, belief: 'failed', evidence }))];
};

const agent = new Agent({ name: 'naive', model: new ScriptedModel('naive', script), mcpServers: [mcp] });
try {
  for (const it of JSON.parse(env.REPLAYLAB_INTENTS || '[]')) {
    const res = await run(agent, JSON.stringify(it), { maxTurns: 5 });
    process.stdout.write(res.finalOutput + '\n');
  }
} finally {
  await mcp.close();
}
