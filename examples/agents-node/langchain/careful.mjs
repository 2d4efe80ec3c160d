// The careful agent on LangChain.js: the model sees one tool, `refund`, made
// with tool(); its func is the careful tool layer (examples/agents-node),
// which mints and keeps the key per intent and calls the provider's MCP
// tools through the tools @langchain/mcp-adapters made of them.
import { createAgent, tool } from 'langchain';
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { MultiServerMCPClient } from '@langchain/mcp-adapters';
import { z } from 'zod';
import { Careful, contract, belief, outcomeOf, unknownOf } from '../careful.mjs';
import { ScriptedModel } from './model.mjs';

const mcp = new MultiServerMCPClient({
  mcpServers: {
    replaylab: {
      transport: 'http',
      url: contract.mcpURL,
      headers: contract.apiKey ? { Authorization: `Bearer ${contract.apiKey}` } : undefined,
      defaultToolTimeout: contract.timeoutMs,
    },
  },
});
const mcpTools = Object.fromEntries((await mcp.getTools()).map((t) => [t.name, t]));

// call runs an adapter tool and says what came back as an Outcome. The
// adapter returns the text block (with structuredContent), and throws a
// ToolException for an error result and for a call that got no result.
async function call(name, args) {
  try {
    const out = await mcpTools[name].invoke(args);
    const block = Array.isArray(out) ? out[0] : out;
    return typeof block === 'string' ? outcomeOf(block) : outcomeOf({ content: [block], structuredContent: block?.structuredContent });
  } catch (e) {
    const m = /returned an error: ([\s\S]*)$/.exec(e?.message ?? '');
    return m ? { kind: 'error', text: m[1] } : unknownOf(e);
  }
}

const careful = new Careful(call, 'careful');
const refund = tool(async (it) => JSON.stringify(await careful.settle(it)), {
  name: 'refund',
  description: 'Refund one intent exactly once. Safe to call again for the same intent.',
  schema: z.object({ intent: z.string(), charge: z.string(), amount: z.number(), currency: z.string().optional() }),
});

const script = (messages) => {
  const it = JSON.parse(messages.find((m) => HumanMessage.isInstance(m)).text);
  const done = messages.find((m) => ToolMessage.isInstance(m));
  if (!done) return new AIMessage({ content: '', tool_calls: [{ name: 'refund', args: it, id: 'call_1', type: 'tool_call' }] });
  return new AIMessage(done.status === 'error' ? JSON.stringify({ intent: it.intent, belief: 'escalated', evidence: done.text }) : done.text);
};

const agent = createAgent({ model: new ScriptedModel('careful', script), tools: [refund] });
for (const it of contract.intents) {
  const out = await agent.invoke({ messages: [new HumanMessage(JSON.stringify(it))] });
  belief(JSON.parse(out.messages.at(-1).text));
}
await mcp.close();
