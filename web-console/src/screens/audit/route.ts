// Where the Audit trail screen sits in the console (its code is loaded when it is first opened).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/audit',
  label: 'Audit trail',
  scope: 'audit:read',
  order: 30,
};
