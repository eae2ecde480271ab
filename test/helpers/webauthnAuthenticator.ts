import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoBase64URL, isoCBOR } from '@simplewebauthn/server/helpers';

/**
 * A software FIDO2 authenticator for tests: one ES256 (P-256) key pair per instance, 'none'
 * attestation, a signature counter. It builds exactly what a browser hands to the server:
 *   registration: clientDataJSON + attestationObject (CBOR { fmt, attStmt, authData }), where
 *     authData = rpIdHash ‖ flags (UP|UV|AT) ‖ signCount ‖ AAGUID ‖ credIdLen ‖ credId ‖ COSE key
 *   login: clientDataJSON + authenticatorData + ECDSA-SHA256 (DER) signature over
 *     authenticatorData ‖ SHA-256(clientDataJSON).
 * CBOR comes from @simplewebauthn/server's own helpers (tiny-cbor), which keep Maps as Maps.
 */
const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_AT = 0x40;

const b64 = (data: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(data));
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

export interface AuthenticatorOptions {
  rpId: string;
  origin: string;
  /** Counter at registration; every assertion adds one. */
  counterStart?: number;
  userVerified?: boolean;
}

export class SoftwareAuthenticator {
  readonly credentialId = randomBytes(16);
  readonly aaguid = Buffer.alloc(16);
  counter: number;
  userHandle: string | null = null;
  private readonly privateKey: KeyObject;
  private readonly publicKey: KeyObject;

  constructor(private readonly opts: AuthenticatorOptions) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.privateKey = privateKey;
    this.publicKey = publicKey;
    this.counter = opts.counterStart ?? 0;
  }

  get id(): string {
    return b64(this.credentialId);
  }

  /** COSE_Key of the public key: kty EC2 (2), alg ES256 (−7), crv P-256 (1), x, y. */
  coseKey(): Uint8Array {
    const jwk = this.publicKey.export({ format: 'jwk' });
    return isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
  }

  private flags(extra = 0): number {
    return FLAG_UP | (this.opts.userVerified === false ? 0 : FLAG_UV) | extra;
  }

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin = this.opts.origin): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() → RegistrationResponseJSON, for options from register/options. */
  createCredential(options: { challenge: string; rp?: { id?: string }; user?: { id: string } }, overrides: { origin?: string } = {}) {
    const rpId = options.rp?.id ?? this.opts.rpId;
    this.userHandle = options.user?.id ?? null;
    const idLen = Buffer.alloc(2);
    idLen.writeUInt16BE(this.credentialId.length);
    const authData = Buffer.concat([
      sha256(rpId),
      Buffer.from([this.flags(FLAG_AT)]),
      u32(this.counter),
      this.aaguid,
      idLen,
      this.credentialId,
      Buffer.from(this.coseKey()),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, any>([
        ['fmt', 'none'],
        ['attStmt', new Map()],
        ['authData', authData],
      ]),
    );
    const clientDataJSON = this.clientData('webauthn.create', options.challenge, overrides.origin);
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64(clientDataJSON),
        attestationObject: b64(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }

  /**
   * navigator.credentials.get() → AuthenticationResponseJSON. The counter grows by one unless
   * `counter` forces a value (to simulate a cloned authenticator).
   */
  getAssertion(options: { challenge: string; rpId?: string }, overrides: { counter?: number; origin?: string; tamper?: boolean } = {}) {
    const rpId = options.rpId ?? this.opts.rpId;
    this.counter = overrides.counter ?? this.counter + 1;
    const authData = Buffer.concat([sha256(rpId), Buffer.from([this.flags()]), u32(this.counter)]);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, overrides.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), this.privateKey); // DER
    if (overrides.tamper) signature[signature.length - 1] ^= 0xff;
    return {
      id: this.id,
      rawId: this.id,
      type: 'public-key' as const,
      response: {
        clientDataJSON: b64(clientDataJSON),
        authenticatorData: b64(authData),
        signature: b64(signature),
        ...(this.userHandle ? { userHandle: this.userHandle } : {}),
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform' as const,
    };
  }
}
