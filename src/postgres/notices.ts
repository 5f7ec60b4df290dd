/** What a step tells listeners on the runtime's channel: which run moved, to what status, and which log rows it added. */
export interface StepNotice {
  readonly actor: string;
  readonly agent: string;
  readonly status: string;
  /** Log rows `from` (included) to `to` (excluded) are new. */
  readonly from: number;
  readonly to: number;
}

export const stepNotice = (notice: StepNotice): string => JSON.stringify(notice);

/** Undefined for a payload that is not a step's notice (the channel is the database's: anyone may send on it). */
export function parseStepNotice(payload: string | undefined): StepNotice | undefined {
  try {
    const value = JSON.parse(payload ?? '') as Partial<StepNotice>;
    return typeof value.actor === 'string' && typeof value.agent === 'string' && typeof value.status === 'string' ? (value as StepNotice) : undefined;
  } catch {
    return undefined;
  }
}
