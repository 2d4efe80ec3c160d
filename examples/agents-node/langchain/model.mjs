// A scripted chat model for createAgent: no LLM. script(messages) returns
// the next AIMessage (tool_calls, or a final answer); every ToolMessage the
// model is handed is logged to stderr exactly as it arrives.
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { ToolMessage } from '@langchain/core/messages';

export class ScriptedModel extends BaseChatModel {
  constructor(who, script) {
    super({});
    this.who = who;
    this.script = script;
  }
  _llmType() { return 'scripted'; }
  bindTools() { return this; }
  async _generate(messages) {
    const last = messages.at(-1);
    if (ToolMessage.isInstance(last)) {
      process.stderr.write(`[${this.who} ${process.env.REPLAYLAB_SCENARIO} +${Math.round(performance.now())}ms] model sees ToolMessage status=${last.status} content=${JSON.stringify(last.content)}\n`);
    }
    return { generations: [{ text: '', message: this.script(messages) }] };
  }
}
