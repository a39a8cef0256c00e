// The console's screens, in navigation order. Each names the scope it needs to be useful; the
// navigation shows every screen and each screen explains a missing scope itself.
import type { ComponentType } from 'react';

export interface ScreenEntry {
  readonly path: string;
  readonly label: string;
  readonly scope: string;
  readonly component: ComponentType;
}

export const SCREENS: readonly ScreenEntry[] = [];
