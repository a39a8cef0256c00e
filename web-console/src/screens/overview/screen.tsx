import { OverviewScreen } from './overview-screen.tsx';

export default OverviewScreen;
