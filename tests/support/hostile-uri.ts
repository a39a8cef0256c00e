// Percent-encodes text as an attacker would send it in a URL: an unpaired surrogate (which
// encodeURIComponent refuses) as its raw WTF-8 bytes, so fuzzers reach the server with it.
export function hostileUriComponent(text: string): string {
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0) as number;
    if (code < 0xd800 || code > 0xdfff) out += encodeURIComponent(char);
    else {
      for (const byte of [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]) {
        out += `%${byte.toString(16).toUpperCase()}`;
      }
    }
  }
  return out;
}
