// Starts `replaylab serve` on a free loopback port for the stripe-node
// tests, and reads what it recorded through its control endpoint.
//
// The binary is $REPLAYLAB_BIN when set (.ci/run builds it once), or one
// built here with `go build` from the repository root.

import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..', '..');

let built;

// binary is the replaylab to run: $REPLAYLAB_BIN, or one built once.
export function binary() {
  if (process.env.REPLAYLAB_BIN) return process.env.REPLAYLAB_BIN;
  if (!built) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replaylab-node-'));
    built = path.join(dir, 'replaylab');
    execFileSync('go', ['build', '-o', built, '.'], { cwd: root, stdio: 'inherit' });
    process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return built;
}

// startServe runs `replaylab serve --addr 127.0.0.1:0 ARGS...` and resolves
// once it listens, with its base URL and what it says.
export async function startServe(args = []) {
  const child = spawn(binary(), ['serve', '--addr', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b) => { stdout += b; });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stderr });
    const timer = setTimeout(() => reject(new Error(`serve did not listen within 20 s:\n${stderr}`)), 20000);
    lines.on('line', (line) => {
      stderr += line + '\n';
      const m = /listening on (https?:\/\/\S+)/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', () => { clearTimeout(timer); reject(new Error(`serve exited before it listened:\n${stderr}`)); });
  });
  const { port } = new URL(url);
  return {
    url,
    port: Number(port),
    // session is what serve recorded so far: requests, ledger, verdicts.
    async session() {
      return JSON.parse(await control(`${url}/_replaylab/session`));
    },
    // advance moves serve's clock on by n ticks.
    async advance(n) {
      await control(`${url}/_replaylab/advance`, new URLSearchParams({ ticks: String(n) }).toString());
    },
    // stop ends serve as Ctrl-C does and resolves with its report.
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const end = await exited;
      return { ...end, stdout, stderr };
    },
  };
}

// control calls serve's control endpoint (a POST when body is given)
// and resolves with the reply's text; over --tls the certificate serve
// made at start is taken unchecked, as it is only this test's.
function control(target, body) {
  const u = new URL(target);
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(u, {
      method: body === undefined ? 'GET' : 'POST',
      rejectUnauthorized: false,
      headers: body === undefined ? {} : { 'Content-Type': 'application/x-www-form-urlencoded' },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`${u.pathname}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// creates lists the session's creates.
export function creates(session) {
  return session.requests.filter((r) => r.kind === 'create');
}

// verdictOf is the session's verdict for intent.
export function verdictOf(session, intent) {
  const v = session.outcome.verdicts.find((x) => x.intent === intent);
  if (!v) throw new Error(`no verdict for ${intent} in ${JSON.stringify(session.outcome.verdicts)}`);
  return v.verdict;
}
