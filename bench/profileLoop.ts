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
 * Arguments: contender (`actorloop`, `journal`, `file`, `xstate`, `bare`), N (default 10), seconds (default 8).
 */
import { actorloop } from './scenarios/actorloop.ts';
import { actorloopWithFileStore } from './scenarios/actorloopFileStore.ts';
import { bareLoop } from './scenarios/bareLoop.ts';
import type { Contender } from './scenarios/types.ts';
import { xstateMachine } from './scenarios/xstateMachine.ts';

const [which = 'actorloop', nText = '10', secondsText = '8'] = process.argv.slice(2);
const n = Number(nText);
const fileStore = which === 'file' ? actorloopWithFileStore('actorloop_file') : which === 'journal' ? actorloopWithFileStore('actorloop_journal') : undefined;
const contenders: Record<string, Contender | undefined> = {
  actorloop,
  xstate: xstateMachine,
  bare: bareLoop,
  journal: fileStore?.contender,
  file: fileStore?.contender,
};
const contender = contenders[which];
if (contender === undefined) throw new Error(`Unknown contender ${which}: use actorloop, journal, file, xstate or bare.`);
const runOnce = contender.create({ n, delayMs: 0 });
const started = performance.now();
let runs = 0;
try {
  while (performance.now() - started < Number(secondsText) * 1000) {
    await runOnce();
    runs++;
  }
} finally {
  fileStore?.cleanup();
}
console.log(`${contender.label}, react-${n}: ${runs} runs, ${(((performance.now() - started) * 1000) / (runs * n)).toFixed(1)} µs per iteration`);
