// Where the Overview screen sits in the console (its code is loaded when it is first opened).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/overview',
  label: 'Overview',
  scope: 'audit:read',
  order: 5,
};
