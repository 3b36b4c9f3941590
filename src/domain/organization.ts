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
