// careful.mjs: the Vercel AI SDK with a scripted model (no LLM). The model sees one tool,
// `refund` (the SDK's tool()), and never create_refund nor a key: refund's execute is the careful
// tool layer (examples/agents-node/careful.mjs), which mints the key per intent and reaches the
// provider's MCP tools through the SDK's own MCP client, each call under the request timeout.
import { generateText, isStepCount, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { createMCPClient } from '@ai-sdk/mcp';
import { z } from 'zod';
import { Careful, contract, belief, log, outcomeOf, unknownOf } from '../careful.mjs';

const mcp = await createMCPClient({ transport: { type: 'http', url: contract.mcpURL,
  headers: contract.apiKey ? { Authorization: `Bearer ${contract.apiKey}` } : {} } });
const mcpTools = await mcp.tools(); // create_refund, get_refund, list_refunds: for the layer only
let n = 0;
const call = async (name, args) => {
  try {
    return outcomeOf(await mcpTools[name].execute(args, { toolCallId: `layer-${++n}`, messages: [],
      abortSignal: AbortSignal.timeout(contract.timeoutMs) }));
  } catch (err) { return unknownOf(err); }
};
const careful = new Careful(call, 'careful-vercel');
const refund = tool({
  description: 'Refund one intent exactly once. The tool layer keeps the idempotency key.',
  inputSchema: z.object({ intent: z.string(), charge: z.string(), amount: z.number().int(), currency: z.string().optional() }),
  execute: (it) => careful.settle(it),
});

const usage = { inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 0, text: 0, reasoning: 0 } };
const model = new MockLanguageModelV4({
  doGenerate: async ({ prompt }) => {
    const it = JSON.parse(prompt.find((m) => m.role === 'user').content[0].text);
    const last = prompt.filter((m) => m.role === 'tool').flatMap((m) => m.content).at(-1);
    if (!last) return { content: [{ type: 'tool-call', toolCallId: 'call-1', toolName: 'refund', input: JSON.stringify(it) }],
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage };
    log('careful-vercel', 'model sees:', JSON.stringify(last));
    const b = last.output.type === 'json' ? last.output.value
      : { intent: it.intent, belief: 'escalated', evidence: `the refund tool failed: ${JSON.stringify(last.output.value)}` };
    return { content: [{ type: 'text', text: JSON.stringify(b) }], finishReason: { unified: 'stop', raw: 'stop' }, usage };
  },
});

for (const it of contract.intents) {
  const res = await generateText({ model, tools: { refund }, stopWhen: isStepCount(2), prompt: JSON.stringify(it) });
  belief({ ...JSON.parse(res.text), intent: it.intent });
}
await mcp.close();
