/**
 * Serves the browser example: `npx deno run -A examples/web/serve.ts` (or `bun examples/web/serve.ts`), then open
 * http://127.0.0.1:8000/web/ (no cross-origin isolation: one agent, non-shared memory) or
 * http://127.0.0.1:8000/isolated/web/ (COOP/COEP headers: SharedArrayBuffer available). Add `?device=webgpu` to
 * train on the GPU where the browser has WebGPU. The page's script is `app.ts` bundled for browsers with
 * `deno bundle` when the server starts. `--port N` picks the port (0: any free one).
 *
 * @module
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const here = new URL('./', import.meta.url);
const root = new URL('../../', import.meta.url);

/** `examples/web/app.ts` bundled for browsers (one ES module), by the local Deno. */
export function bundleApp(): Uint8Array {
  const deno = typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined'
    ? (globalThis as unknown as { Deno: { execPath(): string } }).Deno.execPath()
    : fileURLToPath(new URL('node_modules/.bin/deno', root));
  if (!existsSync(deno)) throw new Error(`bundling the example needs Deno (${deno}): run npm install`);
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-web-'));
  try {
    const out = join(dir, 'app.js');
    const result = spawnSync(
      deno,
      ['bundle', '--quiet', '--platform', 'browser', fileURLToPath(new URL('app.ts', here)), '-o', out],
      { encoding: 'utf8', cwd: fileURLToPath(root) },
    );
    if (result.status !== 0) throw new Error(`deno bundle failed:\n${result.stderr}`);
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.gz': 'application/gzip',
};

/**
 * Starts the example's server on 127.0.0.1; resolves with the server and its base URL. Paths under `/isolated/` get
 * the cross-origin isolation headers.
 */
export function serveExample(port = 8000): Promise<{ server: Server; url: string }> {
  const app = bundleApp();
  const files: Record<string, () => Uint8Array> = {
    '/web/': () => readFileSync(new URL('index.html', here)),
    '/web/index.html': () => readFileSync(new URL('index.html', here)),
    '/web/app.js': () => app,
    '/data/digits.csv.gz': () => readFileSync(new URL('examples/data/digits.csv.gz', root)),
  };
  const server = createServer((request, response) => {
    let path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const isolated = path.startsWith('/isolated/');
    if (isolated) path = path.slice('/isolated'.length);
    const file = files[path];
    if (file === undefined) {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    const headers: Record<string, string> = {
      'content-type': TYPES[path.slice(path.lastIndexOf('.'))] ?? TYPES['.html'],
      'cache-control': 'no-store',
    };
    if (isolated) {
      headers['cross-origin-opener-policy'] = 'same-origin';
      headers['cross-origin-embedder-policy'] = 'require-corp';
      headers['cross-origin-resource-policy'] = 'same-origin';
    }
    response.writeHead(200, headers).end(file());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const actual = typeof address === 'object' && address !== null ? address.port : port;
      resolve({ server, url: `http://127.0.0.1:${actual}` });
    });
  });
}

if (import.meta.main && process.argv.includes('--help')) {
  console.log('usage: deno run -A examples/web/serve.ts [--port N]  (serves the browser example on 127.0.0.1)');
} else if (import.meta.main) {
  const at = process.argv.indexOf('--port');
  const { url } = await serveExample(at < 0 ? 8000 : Number(process.argv[at + 1]));
  console.log(`Switchyard browser example: ${url}/web/ (not isolated), ${url}/isolated/web/ (cross-origin isolated)`);
}
