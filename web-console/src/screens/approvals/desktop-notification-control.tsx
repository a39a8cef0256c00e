// The operator's switch for desktop notifications, with the browser's answer shown.
import { Badge, Button, Text } from '@mantine/core';
import { IconBell } from '@tabler/icons-react';
import type { DesktopNotifications } from './use-desktop-notifications.ts';

export function DesktopNotificationControl({ desktop }: { desktop: DesktopNotifications }) {
  switch (desktop.permission) {
    case 'default':
      return (
        <Button variant="default" leftSection={<IconBell size={16} />} onClick={desktop.request}>
          Enable desktop notifications
        </Button>
      );
    case 'granted':
      return (
        <Badge variant="light" color="green" leftSection={<IconBell size={12} />}>
          Desktop notifications on
        </Badge>
      );
    case 'denied':
      return (
        <Text size="sm" c="dimmed">
          Desktop notifications are blocked in this browser's site settings.
        </Text>
      );
    case 'unsupported':
      return null;
  }
}
