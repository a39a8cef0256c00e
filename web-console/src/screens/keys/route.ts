// Where the API keys screen sits in the console (its code is loaded when it is first opened).
import type { ScreenRoute } from '../../screens.tsx';

export const route: ScreenRoute = {
  path: '/keys',
  label: 'API keys',
  scope: 'keys:manage',
  order: 60,
};
