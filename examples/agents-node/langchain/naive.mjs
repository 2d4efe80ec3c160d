// The naive agent on LangChain.js: createAgent over the MCP tools as
// @langchain/mcp-adapters exposes them. The scripted model calls
// create_refund with no idempotency key and calls it again, same arguments,
// when what it reads is not a succeeded refund, up to 3 tries.
import { createAgent } from 'langchain';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { ScriptedModel } from './model.mjs';

const env = process.env;
const timeout = Number(env.REPLAYLAB_REQUEST_TIMEOUT_MS || 5000);
const mcp = new MultiServerMCPClient({
  mcpServers: {
    replaylab: {
      transport: 'http',
      url: env.REPLAYLAB_MCP_URL,
      headers: env.REPLAYLAB_API_KEY ? { Authorization: `Bearer ${env.REPLAYLAB_API_KEY}` } : undefined,
      ...(timeout ? { defaultToolTimeout: timeout } : {}),
    },
  },
});

// What a refund in a tool message looks like to the model, if it is one.
const refundIn = (m) => {
  try {
    let v = typeof m.content === 'string' ? JSON.parse(m.content) : m.content;
    if (Array.isArray(v)) v = v[0];
    return v?.type === 'text' ? v.structuredContent ?? JSON.parse(v.text) : v;
  } catch { return null; }
};

const script = (messages) => {
  const it = JSON.parse(messages.find((m) => HumanMessage.isInstance(m)).text);
  const tries = messages.filter((m) => ToolMessage.isInstance(m));
  const r = tries.length ? refundIn(tries.at(-1)) : null;
  if (r?.object === 'refund' && r.status === 'succeeded') return new AIMessage(JSON.stringify({ intent: it.intent, belief: 'done', refund: r.id }));
  if (tries.length < 3) {
    const args = { intent: it.intent, charge: it.charge, amount: it.amount, currency: it.currency };
    return new AIMessage({ content: '', tool_calls: [{ name: 'create_refund', args, id: `call_${tries.length + 1}`, type: 'tool_call' }] });
  }
  const evidence = `try 3: ${r ? `refund ${r.id} is ${r.status}` : JSON.stringify(tries.at(-1).content).slice(0, 200)}`;
  return new AIMessage(JSON.stringify({ intent: it.intent, belief: 'failed', evidence }));
};

const agent = createAgent({ model: new ScriptedModel('naive', script), tools: await mcp.getTools() });
for (const it of JSON.parse(env.REPLAYLAB_INTENTS || '[]')) {
  const out = await agent.invoke({ messages: [new HumanMessage(JSON.stringify(it))] });
  process.stdout.write(out.messages.at(-1).text + '\n');
}
await mcp.close();
