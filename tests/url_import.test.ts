// The package works when imported by URL, as a Deno user would import it from a web server: the repository root is
// served over HTTP from this test process and a Deno subprocess with an empty module cache imports `mod.ts`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, normalize, sep } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DENO = fileURLToPath(new URL('../node_modules/.bin/deno', import.meta.url));
const TIMEOUT_MS = 30_000;

const CONTENT_TYPES: Record<string, string> = {
  '.ts': 'application/typescript',
  '.js': 'application/javascript',
  '.mjs': 'application/javascript',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
};

/** Serves files under ROOT (nothing outside it) and records every requested path with its status. */
function serveRepository(): Promise<{ server: Server; port: number; log: Array<[string, number]> }> {
  const log: Array<[string, number]> = [];
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    const file = normalize(join(ROOT, path));
    let status = 404;
    let body: Uint8Array | string = 'not found';
    let type = 'text/plain';
    if (!file.startsWith(ROOT) || file.split(sep).includes('node_modules')) {
      status = 403;
      body = 'forbidden';
    } else {
      try {
        if (statSync(file).isFile()) {
          body = readFileSync(file);
          type = CONTENT_TYPES[extname(file)] ?? 'application/octet-stream';
          status = 200;
        }
      } catch {
        // not found
      }
    }
    log.push([path, status]);
    res.writeHead(status, { 'content-type': type });
    res.end(body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as AddressInfo).port, log }));
  });
}

function closeServer(server: Server): Promise<void> {
  // Deno's fetch and the subprocess may leave keep-alive connections open; close them so `close` completes.
  (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
  return new Promise((resolve) => server.close(() => resolve()));
}

function runDeno(args: string[], cwd: string, env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(DENO, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => stdout += s);
    child.stderr.setEncoding('utf8').on('data', (s: string) => stderr += s);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`deno did not finish within ${TIMEOUT_MS} ms:\n${stderr}`));
    }, TIMEOUT_MS);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('importing the package by URL', () => {
  it('a Deno program with an empty module cache imports mod.ts over HTTP, registers a kernel and calls it', async () => {
    const { server, port, log } = await serveRepository();
    const work = mkdtempSync(join(tmpdir(), 'switchyard-url-import-'));
    try {
      const base = `http://127.0.0.1:${port}`;
      // The server itself: TypeScript with its media type, nothing outside the repository.
      const served = await fetch(`${base}/mod.ts`);
      assert.equal(served.status, 200);
      assert.equal(served.headers.get('content-type'), 'application/typescript');
      assert.match(await served.text(), /export \* from '\.\/core\/dispatch\/mod\.ts';/);
      const missing = await fetch(`${base}/no/such/file.ts`);
      assert.equal(missing.status, 404);
      await missing.text();
      log.length = 0;

      const script = join(work, 'main.ts');
      writeFileSync(
        script,
        `import { Dispatcher, DispatchKey, Library } from '${base}/mod.ts';\n` +
          `const d = new Dispatcher();\n` +
          `using lib = new Library('url', 'DEF', undefined, { dispatcher: d });\n` +
          `const op = lib.define('url::double(int x) -> int');\n` +
          `lib.impl('double', (_hi: number, _lo: number, x: number) => 2 * x, DispatchKey.CompositeExplicitAutograd);\n` +
          `console.log('url::double(21) = ' + op.call(21));\n`,
      );
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
      env.DENO_DIR = join(work, 'deno_dir'); // empty cache: every module must come from the server
      env.NO_COLOR = '1';
      const host = `127.0.0.1:${port}`;
      const result = await runDeno(
        ['run', '--no-prompt', `--allow-import=${host}`, `--allow-net=${host}`, script],
        work,
        env,
      );
      assert.equal(result.code, 0, `deno failed:\n${result.stderr}`);
      assert.ok(result.stdout.split('\n').includes('url::double(21) = 42'), `stdout:\n${result.stdout}`);
      const fetched = new Map(log);
      assert.equal(fetched.get('/mod.ts'), 200, `requests: ${JSON.stringify(log)}`);
      assert.equal(fetched.get('/core/dispatch/dispatcher.ts'), 200);
      assert.equal(fetched.get('/core/dispatch/table_store.ts'), 200);
      assert.deepEqual(log.filter(([, status]) => status !== 200), [], 'every module the graph needs exists');
    } finally {
      await closeServer(server);
      rmSync(work, { recursive: true, force: true });
    }
  });
});
