export interface Group {
  id: string;
  name: string;
  description: string | undefined;
  createdAt: number;
}
