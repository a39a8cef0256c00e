// The console's screens, found at build time: every `screens/<name>/screen.tsx` exports `screen`,
// so adding a screen touches no shared file. Each names the scope it needs to be useful; the
// navigation shows every screen and each screen explains a missing scope itself.
import type { ComponentType } from 'react';

export interface ScreenEntry {
  /** Route under /console, e.g. `/approvals`. */
  readonly path: string;
  readonly label: string;
  readonly scope: string;
  /** Position in the navigation (ascending). */
  readonly order: number;
  readonly component: ComponentType;
}

const modules = import.meta.glob<{ screen: ScreenEntry }>('./screens/*/screen.tsx', {
  eager: true,
});

export const SCREENS: readonly ScreenEntry[] = Object.values(modules)
  .map((module) => module.screen)
  .sort((a, b) => a.order - b.order);
