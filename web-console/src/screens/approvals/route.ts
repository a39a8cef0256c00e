// Where the Approvals screen sits in the console (its code is loaded when it is first opened).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/approvals',
  label: 'Approvals',
  scope: 'approvals:decide',
  order: 10,
};
