/**
 * Keep one contender busy for a while so `node --cpu-prof` has something to sample.
 *
 *   node_modules/.bin/esbuild bench/profileLoop.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=bench/results/profileLoop.mjs
 *   node --cpu-prof --cpu-prof-dir=bench/results/prof bench/results/profileLoop.mjs actorloop 10
 *   npx tsx bench/summarizeProfile.ts bench/results/prof/<file>.cpuprofile 40
 *
 * Bundled rather than run through tsx: tsx puts each module on one line (useless line numbers
 * in the profile) and compiles with keepNames, which adds a defineProperty to every closure.
 *
 * Arguments: contender (`actorloop`, `durable`, `xstate`, `bare`), N (default 10), seconds (default 8).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { actorloop, actorloopDurable } from './scenarios/actorloop.ts';
import { bareLoop } from './scenarios/bareLoop.ts';
import type { Contender } from './scenarios/types.ts';
import { xstateFloor } from './scenarios/xstateFloor.ts';

const [which = 'actorloop', nText = '10', secondsText = '8'] = process.argv.slice(2);
const n = Number(nText);
const dir = which === 'durable' ? mkdtempSync(join(tmpdir(), 'actorloop-profile-')) : undefined;
const contenders: Record<string, Contender | undefined> = {
  actorloop,
  xstate: xstateFloor,
  bare: bareLoop,
  durable: dir === undefined ? undefined : actorloopDurable(dir),
};
const contender = contenders[which];
if (contender === undefined) throw new Error(`Unknown contender ${which}: use actorloop, durable, xstate or bare.`);
const prepared = contender.create({ n, delayMs: 0 });
const started = performance.now();
let runs = 0;
try {
  while (performance.now() - started < Number(secondsText) * 1000) {
    await prepared.run();
    runs++;
  }
} finally {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}
console.log(`${contender.label}, react-${n}: ${runs} runs, ${(((performance.now() - started) * 1000) / (runs * n)).toFixed(1)} µs per iteration`);
