/** A fresh database per test file on the cluster `postgresSetup.ts` started, or a skip note. */
import pg from 'pg';
import { inject } from 'vitest';

export const postgresMissing = (): string => inject('postgresMissing');

let counter = 0;

/** Create an empty database and return its URL. */
export async function freshDatabase(prefix = 'test'): Promise<string> {
  const base = inject('postgresUrl');
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`.toLowerCase();
  const client = new pg.Client({ connectionString: base });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}
