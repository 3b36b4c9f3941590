export interface Group {
  id: string;
  name: string;
  description: string | undefined;
  createdAt: number;
  /**
   * Marked as an administrator group: it is or was GATEHOUSE_ADMIN_GROUP or
   * GATEHOUSE_ADMIN_READONLY_GROUP (migration 021). The mark outlives a change of those settings,
   * so the identity API stays out of the group and its members (src/identity/administrators.ts);
   * only an operator clears it.
   */
  administrator: boolean;
}
