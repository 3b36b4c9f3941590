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

/**
 * A case-insensitive substring match (the management API's `?q=`), LIKE wildcards in `value`
 * escaped. `lower()` folds ASCII on SQLite and the database's collation on PostgreSQL; columns
 * stored already folded (username_key, name_key) are compared with `folded` as is.
 */
export function containsFolded(column: Expression<unknown> | ReturnType<typeof sql.ref>, value: string, options: { columnFolded?: boolean } = {}): Expression<SqlBool> {
  const pattern = `%${escapeLike(value)}%`;
  return options.columnFolded ? sql<SqlBool>`${column} like ${pattern} escape '\\'` : sql<SqlBool>`lower(${column}) like ${pattern} escape '\\'`;
}
