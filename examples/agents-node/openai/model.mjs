// A scripted model for the OpenAI Agents SDK: no LLM, no network. It
// implements the SDK's Model interface (getResponse, getStreamedResponse)
// and is handed to an Agent as `model:`. script(items) gets the turn's
// input as the SDK's items (the user message, the model's own function
// calls, their function_call_result items) and returns the next output
// items. Every tool result the model is handed is logged to stderr exactly
// as it arrives.
import { Usage } from '@openai/agents';

const log = (who, ...a) =>
  process.stderr.write(`[${who} ${process.env.REPLAYLAB_SCENARIO} +${Math.round(performance.now())}ms] ${a.join(' ')}\n`);

// The items of a ModelRequest's input: the first turn may be a bare string.
export const itemsOf = (input) => (typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input);

// The text of a user message item (content a string, or input_text parts).
export const textOf = (m) =>
  typeof m.content === 'string' ? m.content : m.content.filter((c) => c.type === 'input_text').map((c) => c.text).join('');

// The text of a function_call_result's output: a string, one {type:'text'}
// item, or a list of them.
export const outputText = (o) => {
  if (typeof o === 'string') return o;
  const parts = Array.isArray(o) ? o : [o];
  return parts.map((p) => (p?.type === 'text' || p?.type === 'input_text' ? p.text : JSON.stringify(p))).join('\n');
};

export const say = (text) => ({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text }] });
export const callTool = (name, args, callId) =>
  ({ type: 'function_call', name, callId, id: callId, status: 'completed', arguments: JSON.stringify(args) });

export class ScriptedModel {
  constructor(who, script) {
    this.who = who;
    this.script = script;
    this.n = 0;
  }
  async getResponse(request) {
    const items = itemsOf(request.input);
    const last = items.at(-1);
    if (last?.type === 'function_call_result') log(this.who, 'model sees function_call_result', JSON.stringify(last));
    return { usage: new Usage(), output: this.script(items), responseId: `scripted-${++this.n}` };
  }
  async *getStreamedResponse(request) {
    const r = await this.getResponse(request);
    yield { type: 'response_done', response: { id: r.responseId, usage: { requests: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 }, output: r.output } };
  }
}
