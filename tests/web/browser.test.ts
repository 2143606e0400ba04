/**
 * The browser example (`examples/web/`) in headless Chromium (Debian's `chromium`; `.ci/run` installs it where it
 * is missing): the page loads from a local server with and without cross-origin isolation headers, trains the digits
 * MLP to the expected accuracy with a flat tensor count, shows the dispatch table, and a screenshot of its plot holds
 * both curves. Driven over the Chrome DevTools Protocol (a WebSocket), so it runs the same under Deno and Bun.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveExample } from '../../examples/web/serve.ts';

const CHROMIUM = ['chromium', 'chromium-browser', 'google-chrome'].find((name) =>
  spawnSync('sh', ['-c', `command -v ${name}`]).status === 0
);

/** A minimal Chrome DevTools Protocol client over one browser WebSocket, with flattened page sessions. */
class Devtools {
  #socket: WebSocket;
  #next = 1;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data));
      const waiter = message.id === undefined ? undefined : this.#pending.get(message.id);
      if (waiter === undefined) return;
      this.#pending.delete(message.id);
      if (message.error) waiter.reject(new Error(`${message.error.message} (${message.error.code})`));
      else waiter.resolve(message.result);
    };
  }

  static connect(url: string): Promise<Devtools> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.onopen = () => resolve(new Devtools(socket));
      socket.onerror = () => reject(new Error(`cannot connect to ${url}`));
    });
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<any> {
    const id = this.#next++;
    this.#socket.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
    return new Promise((resolve, reject) => this.#pending.set(id, { resolve, reject }));
  }

  close(): void {
    this.#socket.close();
  }
}

/** Decodes an 8-bit RGB or RGBA PNG (what Chromium's screenshots are) into RGBA pixels. */
async function decodePng(png: Uint8Array<ArrayBuffer>): Promise<{ width: number; height: number; rgba: Uint8Array }> {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let at = 8, width = 0, height = 0, channels = 0;
  const idat: Uint8Array<ArrayBuffer>[] = [];
  while (at < png.length) {
    const length = view.getUint32(at), type = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      assert.equal(data[8], 8, 'bit depth');
      channels = data[9] === 6 ? 4 : data[9] === 2 ? 3 : 0;
      assert.ok(channels > 0 && data[12] === 0, `unsupported PNG colour type ${data[9]} / interlace ${data[12]}`);
    } else if (type === 'IDAT') idat.push(data);
    at += 12 + length;
  }
  const stream = new Blob(idat).stream().pipeThrough(new DecompressionStream('deflate'));
  const raw = new Uint8Array(await new Response(stream).arrayBuffer());
  const stride = width * channels, rgba = new Uint8Array(width * height * 4);
  let previous = new Uint8Array(stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)], line = raw.slice(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? line[i - channels] : 0, b = previous[i], c = i >= channels ? previous[i - channels] : 0;
      const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
      const predictor = filter === 0
        ? 0
        : filter === 1
        ? a
        : filter === 2
        ? b
        : filter === 3
        ? (a + b) >> 1
        : pa <= pb && pa <= pc
        ? a
        : pb <= pc
        ? b
        : c;
      line[i] = (line[i] + predictor) & 0xff;
    }
    for (let x = 0; x < width; x++) {
      for (let k = 0; k < 4; k++) rgba[(y * width + x) * 4 + k] = k < channels ? line[x * channels + k] : 255;
    }
    previous = line;
  }
  return { width, height, rgba };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('the browser example in headless Chromium', () => {
  let server: Server, base = '', browser: ChildProcess, devtools: Devtools, profile = '';

  before(async () => {
    assert.ok(CHROMIUM !== undefined, 'no Chromium found: install it (apt install chromium), as .ci/run does');
    ({ server, url: base } = await serveExample(0));
    profile = mkdtempSync(join(tmpdir(), 'switchyard-chromium-'));
    browser = spawn(CHROMIUM!, [
      '--headless=new',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--remote-debugging-port=0',
      `--user-data-dir=${profile}`,
      'about:blank',
    ], { stdio: ['ignore', 'ignore', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`Chromium did not start:\n${text}`)), 30_000);
      browser.stderr!.on('data', (chunk) => {
        text += chunk;
        const m = /DevTools listening on (ws:\/\/\S+)/.exec(text);
        if (m !== null) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    devtools = await Devtools.connect(url);
  });

  after(async () => {
    if (browser !== undefined && browser.exitCode === null) {
      const exited = new Promise((resolve) => browser.once('exit', resolve));
      // Closing through DevTools lets Chromium stop its helper processes (which write to the profile) before it
      // exits; SIGKILL only if it has not exited within 5 s.
      await Promise.race([devtools?.send('Browser.close').catch(() => {}), sleep(5_000)]);
      const killer = setTimeout(() => browser.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(killer);
    }
    devtools?.close();
    server?.close();
    // Helper processes may still be writing to the profile for a moment after the browser exits: retry (Deno's
    // rmSync ignores `maxRetries`) for up to 10 s, then report.
    for (let attempt = 0; profile !== ''; attempt++) {
      try {
        rmSync(profile, { recursive: true, force: true });
        break;
      } catch (e) {
        if (attempt >= 100) throw e;
        await sleep(100);
      }
    }
  });

  /** Opens `path`, waits for the demo to finish, returns its state and a screenshot of the plot. */
  async function runPage(path: string) {
    const { targetId } = await devtools.send('Target.createTarget', { url: `${base}${path}` });
    const { sessionId } = await devtools.send('Target.attachToTarget', { targetId, flatten: true });
    try {
      const evaluate = async (expression: string) =>
        (await devtools.send('Runtime.evaluate', { expression, returnByValue: true }, sessionId)).result.value;
      const deadline = Date.now() + 90_000;
      while (!(await evaluate('globalThis.switchyardDemo?.done === true'))) {
        assert.ok(Date.now() < deadline, `${path} did not finish training in 90 s`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const state = JSON.parse(await evaluate('JSON.stringify(globalThis.switchyardDemo)'));
      const tableText = await evaluate(`document.getElementById('table').textContent`);
      const rect = JSON.parse(
        await evaluate(`JSON.stringify(document.getElementById('plot').getBoundingClientRect())`),
      );
      const shot = await devtools.send('Page.captureScreenshot', {
        format: 'png',
        clip: { x: rect.x, y: rect.y, width: rect.width, height: rect.height, scale: 1 },
      }, sessionId);
      const png = Uint8Array.from(atob(shot.data), (c) => c.charCodeAt(0));
      return { state, tableText, image: await decodePng(png) };
    } finally {
      await devtools.send('Target.closeTarget', { targetId });
    }
  }

  /** Pixels of the plot close to a curve's colour. */
  function count(image: { rgba: Uint8Array }, [r, g, b]: readonly number[]): number {
    let n = 0;
    for (let i = 0; i < image.rgba.length; i += 4) {
      const d = Math.abs(image.rgba[i] - r) + Math.abs(image.rgba[i + 1] - g) + Math.abs(image.rgba[i + 2] - b);
      if (d < 60) n++;
    }
    return n;
  }

  for (const [path, isolated] of [['/web/', false], ['/isolated/web/', true]] as const) {
    it(`trains the digits MLP on ${path} (${isolated ? 'cross-origin isolated' : 'no SharedArrayBuffer'})`, async () => {
      const { state, tableText, image } = await runPage(path);
      assert.equal(state.error, undefined, state.error);
      assert.equal(state.crossOriginIsolated, isolated);
      assert.equal(state.sharedMemory, isolated);
      assert.equal(state.losses.length, 20);
      assert.ok(state.testAccuracy >= 0.95, `test accuracy ${state.testAccuracy}`);
      assert.ok(state.losses[19] < state.losses[0] / 10, `loss ${state.losses[0]} -> ${state.losses[19]}`);
      assert.ok(state.liveTensors.every((n: number) => n === state.liveTensors[0]), `live ${state.liveTensors}`);
      assert.match(tableText, /AutogradCPU.*autograd kernel/s, 'the dispatch table of aten::add.Tensor is not shown');
      assert.match(tableText, /CPU.*kernel/s);
      assert.ok(count(image, [0xd9, 0x30, 0x25]) > 300, 'the loss curve is not in the screenshot');
      assert.ok(count(image, [0x1a, 0x73, 0xe8]) > 300, 'the accuracy curve is not in the screenshot');
    });
  }
});
