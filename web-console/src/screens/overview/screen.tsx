import type { ScreenEntry } from '../../screens.tsx';
import { OverviewScreen } from './overview-screen.tsx';

export const screen: ScreenEntry = {
  path: '/overview',
  label: 'Overview',
  scope: 'audit:read',
  order: 5,
  component: OverviewScreen,
};
