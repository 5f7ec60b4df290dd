/**
 * Vitest global setup: a throwaway PostgreSQL cluster for the `test/postgres` files (started by
 * scripts/postgresCluster.ts); its URL goes to the tests as `postgresUrl`. Without the server
 * binaries (a machine without Debian's `postgresql`), the files skip with a note — except in
 * CI, where `.ci/run` installs them and a missing server is an error.
 */
import type { TestProject } from 'vitest/node';
import { startCluster } from '../../scripts/postgresCluster.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string;
    postgresMissing: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  const cluster = await startCluster();
  if ('missing' in cluster) {
    if (process.env['CI'] === 'true') throw new Error('PostgreSQL server binaries not found: .ci/run installs Debian\'s postgresql.');
    project.provide('postgresUrl', '');
    project.provide('postgresMissing', 'PostgreSQL is not installed here (Debian: apt-get install postgresql); the Postgres runtime tests are skipped.');
    return undefined;
  }
  project.provide('postgresUrl', cluster.url);
  project.provide('postgresMissing', '');
  return () => cluster.stop();
}
