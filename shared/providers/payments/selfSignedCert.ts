import { generateKeyPair, randomBytes, sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

/**
 * A throwaway self-signed RSA certificate, for test-webhook's PayPal delivery: PayPal's
 * verification needs an X.509 certificate, and Node can read but not write one, so the few DER
 * structures RFC 5280 requires are encoded here (no extensions, which a signing certificate for
 * SHA256withRSA verification does not need). The private key never leaves the caller.
 */

const generateKeyPairAsync = promisify(generateKeyPair);

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}
const tlv = (tag: number, ...content: Buffer[]) => {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
};
const seq = (...c: Buffer[]) => tlv(0x30, ...c);
const set = (...c: Buffer[]) => tlv(0x31, ...c);
const NULL = Buffer.from([0x05, 0x00]);
/** 1.2.840.113549.1.1.11 sha256WithRSAEncryption */
const OID_SHA256_RSA = Buffer.from('06092a864886f70d01010b', 'hex');
/** 2.5.4.3 commonName */
const OID_CN = Buffer.from('0603550403', 'hex');

/** UTCTime until 2049, GeneralizedTime from 2050 on (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(digits.slice(2))) : tlv(0x18, Buffer.from(digits));
}

function name(commonName: string): Buffer {
  return seq(set(seq(OID_CN, tlv(0x0c, Buffer.from(commonName, 'utf8')))));
}

export interface SelfSignedCert {
  certPem: string;
  privateKey: KeyObject;
}

/** A fresh RSA-2048 key and a certificate for it valid from `notBefore` to `notAfter`. */
export async function createSelfSignedCert(opts: { commonName: string; notBefore: Date; notAfter: Date }): Promise<SelfSignedCert> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', { modulusLength: 2048 });
  const serial = randomBytes(16);
  serial[0] &= 0x7f; // a positive INTEGER
  serial[0] |= 0x01; // and no leading zero byte
  const algorithm = seq(OID_SHA256_RSA, NULL);
  const subject = name(opts.commonName);
  const tbs = seq(
    tlv(0xa0, tlv(0x02, Buffer.from([0x02]))), // [0] EXPLICIT version v3
    tlv(0x02, serial),
    algorithm,
    subject, // issuer: self-signed
    seq(time(opts.notBefore), time(opts.notAfter)),
    subject,
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = sign('sha256', tbs, privateKey); // RSASSA-PKCS1-v1_5
  const der = seq(tbs, algorithm, tlv(0x03, Buffer.from([0x00]), signature));
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return { certPem: `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`, privateKey };
}
