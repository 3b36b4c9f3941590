import { sql, type Expression, type SqlBool } from 'kysely';
import { escapeLike } from './attributes.ts';

/**
 * One filter value against one column or attribute value: exact (`=`, case-sensitive) or prefix
 * (case-insensitive, with LIKE wildcards in the value escaped so they match literally).
 */
export function matches(column: Expression<unknown> | ReturnType<typeof sql.ref>, value: string, exact: boolean): Expression<SqlBool> {
  if (exact) return sql<SqlBool>`${column} = ${value}`;
  return sql<SqlBool>`lower(${column}) like ${`${escapeLike(value.toLowerCase())}%`} escape '\\'`;
}
