// Seals a person's intervention answers with a key derived from a passphrase only they know, so the server can
// keep a backup it cannot read: PBKDF2-SHA256 derives an AES-256-GCM key; the algorithm's name is bound to the
// ciphertext as additional data. The Swift SDK (InterludeKit) seals and opens the same envelope.

export const ALGORITHM = "PBKDF2-SHA256+AES-256-GCM";
export const ITERATIONS = 600000;

const encoder = new TextEncoder();

function toBase64(bytes) {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function fromBase64(text) {
  return Uint8Array.from(atob(text), (character) => character.charCodeAt(0));
}

async function deriveKey(passphrase, salt, iterations) {
  const material = await crypto.subtle.importKey("raw", encoder.encode(passphrase.normalize("NFC")), "PBKDF2", false, [
    "deriveKey",
  ]);
  return crypto.subtle.deriveKey(
    { name: "PBKDF2", hash: "SHA-256", salt, iterations },
    material,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

/** Encrypts `data` (anything JSON can hold) into an envelope the server stores as it is. */
export async function seal(data, passphrase, options = {}) {
  const iterations = options.iterations ?? ITERATIONS;
  const salt = options.salt ?? crypto.getRandomValues(new Uint8Array(16));
  const nonce = options.nonce ?? crypto.getRandomValues(new Uint8Array(12));
  const key = await deriveKey(passphrase, salt, iterations);
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv: nonce, additionalData: encoder.encode(ALGORITHM) },
    key,
    encoder.encode(JSON.stringify(data)),
  );
  return {
    algorithm: ALGORITHM,
    iterations,
    salt: toBase64(salt),
    nonce: toBase64(nonce),
    ciphertext: toBase64(new Uint8Array(ciphertext)),
  };
}

/** Opens an envelope; rejects when the passphrase is not the one it was sealed with. */
export async function open(envelope, passphrase) {
  if (envelope.algorithm !== ALGORITHM) throw new Error(`unknown algorithm ${envelope.algorithm}`);
  const key = await deriveKey(passphrase, fromBase64(envelope.salt), envelope.iterations);
  const plaintext = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(envelope.nonce), additionalData: encoder.encode(ALGORITHM) },
    key,
    fromBase64(envelope.ciphertext),
  );
  return JSON.parse(new TextDecoder().decode(plaintext));
}
