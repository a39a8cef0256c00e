// Hands a file made in the page to the browser's download (a temporary object URL, revoked once
// the download has its own copy).
export function saveFile(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}
