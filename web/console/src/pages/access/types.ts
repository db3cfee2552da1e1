// What the access page's sections read of each other.

export interface Role {
  id: string;
  name: string;
  description: string;
  permissions: string[];
  predefined: boolean;
}

export interface GroupRow {
  id: string;
  name: string;
  description: string;
  roleIds: string[];
  memberIds: string[];
}
