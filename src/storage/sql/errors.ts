import { ConflictError, MissingReferenceError } from '../ports.ts';

/**
 * Driver errors become store errors in this one place: a broken uniqueness rule is a
 * ConflictError and a dangling reference a MissingReferenceError, on SQLite and PostgreSQL alike.
 */
export async function translated<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const e = error as { code?: string; errcode?: number; message?: string };
    if (e.code === '23505' || e.errcode === 2067 || e.errcode === 1555) throw new ConflictError(`${what} already exists`);
    // SQLite reports a delete that ON DELETE RESTRICT refuses as SQLITE_CONSTRAINT_TRIGGER (1811).
    if (e.code === '23503' || e.errcode === 787 || (e.errcode === 1811 && /FOREIGN KEY/.test(e.message ?? ''))) throw new MissingReferenceError(`${what} refers to something that does not exist`);
    throw error;
  }
}
