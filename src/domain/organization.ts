import type { Attributes } from './user.ts';

export interface Organization {
  id: string;
  parentId: string | undefined;
  technicalName: string;
  friendlyName: string;
  type: string | undefined;
  /** A virtual organization groups others and holds no users of its own (CustomerID semantics). */
  virtual: boolean;
  attributes: Attributes;
  createdAt: number;
  updatedAt: number;
}

/**
 * The deepest an organization tree may be: a root and 63 levels below it. Deeper than any real
 * tree; every query that walks the tree stops here, so rows that form a cycle (written by hand, or
 * by a version before the store refused cycles) cannot make a walk run forever. Creating or moving
 * an organization that would be deeper is refused; reading a subtree that is deeper (or cyclic)
 * fails instead of answering a partial list.
 */
export const MAX_ORGANIZATION_DEPTH = 64;
