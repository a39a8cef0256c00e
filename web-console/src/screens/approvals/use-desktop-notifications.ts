// Desktop notifications for held calls. Permission is asked only when the operator presses the
// button (browsers ignore or penalise a prompt on load); without it nothing is shown.
import { useCallback, useState } from 'react';

export type DesktopPermission = NotificationPermission | 'unsupported';

function currentPermission(): DesktopPermission {
  return typeof Notification === 'undefined' ? 'unsupported' : Notification.permission;
}

export interface DesktopNotifications {
  readonly permission: DesktopPermission;
  request(): void;
  notify(title: string, body: string, tag: string): void;
}

export function useDesktopNotifications(): DesktopNotifications {
  const [permission, setPermission] = useState(currentPermission);
  const request = useCallback(() => {
    if (typeof Notification === 'undefined') return;
    void Notification.requestPermission().then(setPermission);
  }, []);
  const notify = useCallback((title: string, body: string, tag: string) => {
    // Read live: the operator may have revoked it in the browser's settings meanwhile.
    if (currentPermission() !== 'granted') return;
    new Notification(title, { body, tag });
  }, []);
  return { permission, request, notify };
}
