import { z } from 'zod';

/**
 * An array whose items are checked in order up to the first that does not fit. A plain `z.array` checks them all and
 * makes an issue of each bad one: a body of many bad items costs CPU in proportion to them and, nested, overflows the stack.
 */
export function listOf<T extends z.ZodType>(item: T, min = 0) {
  return z
    .array(z.unknown())
    .min(min)
    .transform((items, context): z.output<T>[] => {
      const out: z.output<T>[] = [];
      for (const [index, value] of items.entries()) {
        const parsed = item.safeParse(value);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          context.addIssue({ code: 'custom', message: issue?.message ?? 'Invalid input', path: [index, ...(issue?.path ?? [])] });
          return z.NEVER;
        }
        out.push(parsed.data);
      }
      return out;
    });
}
