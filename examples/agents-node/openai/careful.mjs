// careful.mjs: the OpenAI Agents SDK with a scripted model (no LLM). The model sees one tool,
// `refund` (the SDK's tool() with a zod schema), and never create_refund nor a key: refund's
// execute is the careful tool layer (examples/agents-node/careful.mjs), which mints the key per
// intent and reaches the provider's MCP tools through the SDK's own MCP server object
// (MCPServerStreamableHttp.callToolResult), each call under the request timeout.
import { Agent, run, tool, MCPServerStreamableHttp, setTracingDisabled } from '@openai/agents';
import { z } from 'zod';
import { Careful, contract, belief, outcomeOf, unknownOf } from '../careful.mjs';
import { ScriptedModel, callTool, outputText, say, textOf } from './model.mjs';

setTracingDisabled(true); // no trace export: nothing leaves the machine but the MCP calls
const mcp = new MCPServerStreamableHttp({
  name: 'replaylab',
  url: contract.mcpURL,
  requestInit: contract.apiKey ? { headers: { Authorization: `Bearer ${contract.apiKey}` } } : undefined,
  timeout: contract.timeoutMs, // the tool-call timeout (ms) the SDK hands the MCP client
});
await mcp.connect(); // create_refund, get_refund, list_refunds: for the layer only, not the agent

// call runs an MCP tool through the SDK's server object and says what came back as an Outcome:
// the full CallToolResult (content, structuredContent, isError), or a throw (a timeout, a
// closed stream, a transport error), with the caller's own abort at the request timeout too.
const call = async (name, args) => {
  try {
    return outcomeOf(await mcp.callToolResult(name, args, undefined, { signal: AbortSignal.timeout(contract.timeoutMs) }));
  } catch (err) { return unknownOf(err); }
};
const careful = new Careful(call, 'careful-openai');
const refund = tool({
  name: 'refund',
  description: 'Refund one intent exactly once. The tool layer keeps the idempotency key.',
  parameters: z.object({ intent: z.string(), charge: z.string(), amount: z.number().int(), currency: z.string().optional() }),
  execute: (it) => careful.settle(it),
});

const script = (items) => {
  const it = JSON.parse(textOf(items.find((m) => m.role === 'user')));
  const last = items.filter((m) => m.type === 'function_call_result').at(-1);
  if (!last) return [callTool('refund', it, 'call_1')];
  const text = outputText(last.output);
  let b; try { b = JSON.parse(text); } catch {}
  if (!b?.belief) b = { intent: it.intent, belief: 'escalated', evidence: `the refund tool failed: ${text}` };
  return [say(JSON.stringify(b))];
};

const agent = new Agent({ name: 'careful', model: new ScriptedModel('careful-openai', script), tools: [refund] });
try {
  for (const it of contract.intents) {
    const res = await run(agent, JSON.stringify(it), { maxTurns: 3 });
    belief({ ...JSON.parse(res.finalOutput), intent: it.intent });
  }
} finally {
  await mcp.close();
}
