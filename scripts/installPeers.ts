/**
 * `npm run bench:peers` calls this first: install bench/peers' own dependencies (the frameworks
 * the bench compares with) when they are missing or older than its lockfile, so actorloop's own
 * install never carries them.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const peers = join(dirname(fileURLToPath(import.meta.url)), '..', 'bench', 'peers');
const installed = join(peers, 'node_modules', '.package-lock.json');
const lockfile = join(peers, 'package-lock.json');
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lockfile).mtimeMs) {
  process.stderr.write('[bench] installing the peers into bench/peers (npm ci, first use only)\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund'], { cwd: peers, stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write('[bench] npm ci in bench/peers failed; the bench needs the npm registry once to install the peers.\n');
    process.exit(result.status ?? 1);
  }
}
