// Where the Policies screen sits in the console (its code is loaded when it is first opened).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/policies',
  label: 'Policies',
  scope: 'policies:manage',
  order: 40,
};
