// An agent on the MCP TypeScript SDK, traced by a published
// instrumentation (@traceloop/instrumentation-mcp) and exported to a file
// as OTLP/JSON lines, one TracesData per line, with OpenTelemetry's own
// JSON serializer (@opentelemetry/otlp-transformer): the file a team's
// collector file exporter would hold. Nothing here knows replaylab.
//
//   REPLAYLAB_MCP_URL  serve --mcp's /mcp
//   TRACES_FILE        where the spans go
//   AGENT              naive: a fresh key per call, calls again on any
//                      error; careful: one key minted per intent in the
//                      tool layer, and a list by intent before a resend
//
// It prints one JSON line per intent, as conform's contract asks.

import fs from 'node:fs';
import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { McpInstrumentation } from '@traceloop/instrumentation-mcp';
import * as clientModule from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

// fileExporter appends each batch as one line, as the file exporter does.
const fileExporter = (file) => ({
  export(spans, done) {
    fs.appendFileSync(file, Buffer.from(JsonTraceSerializer.serializeRequest(spans)).toString('utf8') + '\n');
    done({ code: 0 });
  },
  shutdown: async () => {},
  forceFlush: async () => {},
});

const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(fileExporter(process.env.TRACES_FILE))] });
provider.register();
const mcp = new McpInstrumentation({ traceContent: true });
mcp.setTracerProvider(provider);
mcp.manuallyInstrument(clientModule); // ESM: the module hook does not see it

const careful = process.env.AGENT === 'careful';
const timeout = Number(process.env.REPLAYLAB_REQUEST_TIMEOUT_MS || 400);
const intents = JSON.parse(process.env.REPLAYLAB_INTENTS || '[{"intent":"refund-1042","charge":"ch_1042","amount":4500,"currency":"usd"}]');

const client = new clientModule.Client({ name: 'traced-agent', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.env.REPLAYLAB_MCP_URL)));
const tracer = trace.getTracer('traced-agent');

const refundOf = (res) => res.structuredContent ?? JSON.parse(res.content[0].text);

for (const it of intents) {
  await tracer.startActiveSpan(`refund ${it.intent}`, async (root) => {
    const key = careful ? `${it.intent}-${randomUUID()}` : undefined; // minted once, in the tool layer
    let belief = { intent: it.intent, belief: 'failed' };
    for (let call = 0; call < 3; call++) {
      if (careful && call > 0) {
        const listed = await client.callTool({ name: 'list_refunds', arguments: { intent: it.intent } }, undefined, { timeout });
        const found = refundOf(listed).refunds?.[0];
        if (found) { belief = { intent: it.intent, belief: 'done', refund: found.id }; break; }
      }
      const args = { intent: it.intent, charge: it.charge, amount: it.amount, currency: it.currency,
        idempotency_key: careful ? key : `${it.intent}-${randomUUID()}` };
      try {
        const res = await client.callTool({ name: 'create_refund', arguments: args }, undefined, { timeout });
        if (!res.isError) { belief = { intent: it.intent, belief: 'done', refund: refundOf(res).id }; break; }
      } catch {
        // a lost reply: the naive agent calls again under a new key
      }
    }
    console.log(JSON.stringify(belief));
    root.end();
  });
}
await client.close();
await provider.shutdown();
