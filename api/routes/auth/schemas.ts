import { EU_COUNTRIES } from '../../../shared/domain/vatId';
import { MIN_PASSWORD_LENGTH } from '../../../shared/auth/passwords';
import { PLANS } from '../../../shared/plans';
import { ROLES } from '../../../shared/actor';

/** Request and response schemas of /api/auth (validation and OpenAPI from one source). */
export const email = { type: 'string', format: 'email', maxLength: 254 } as const;
export const password = { type: 'string', minLength: MIN_PASSWORD_LENGTH, maxLength: 256 } as const;
export const name = { type: 'string', minLength: 1, maxLength: 200, pattern: '\\S' } as const;

export const publicUser = {
  type: 'object',
  required: ['id', 'email', 'name', 'role', 'tenantId'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    email: { type: 'string' },
    name: { type: 'string' },
    role: { type: 'string', enum: ROLES },
    tenantId: { type: 'string', format: 'uuid' },
  },
} as const;

export const register = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password', 'name', 'companyName'],
  properties: {
    email,
    password,
    name,
    companyName: name,
    country: {
      type: 'string',
      enum: [...EU_COUNTRIES],
      default: 'AT',
      description: 'ISO 3166-1 alpha-2 of an EU member state; AT and DE have full tax support',
    },
    plan: { type: 'string', enum: PLANS, default: 'free' },
  },
} as const;

export const login = {
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  // The login password is not held to the creation rules: an old, shorter password must still get the generic 401.
  properties: { email: { type: 'string', minLength: 1, maxLength: 254 }, password: { type: 'string', minLength: 1, maxLength: 256 } },
} as const;

export const session = {
  type: 'object',
  required: ['token', 'user'],
  properties: { token: { type: 'string', description: 'Access token (JWT, 15 minutes)' }, user: publicUser },
} as const;

export const challenge = {
  type: 'object',
  required: ['twoFactorRequired', 'challengeToken', 'methods'],
  properties: {
    twoFactorRequired: { const: true },
    challengeToken: { type: 'string', description: 'Short-lived (5 minutes) token for the second step; not an access token' },
    methods: { type: 'array', items: { type: 'string', enum: ['totp', 'webauthn', 'recovery'] } },
  },
} as const;

export const loginResult = { oneOf: [session, challenge] } as const;

export const tokenOnly = { type: 'object', required: ['token'], properties: { token: { type: 'string' } } } as const;

export const me = {
  type: 'object',
  properties: {
    ...publicUser.properties,
    active: { type: 'boolean' },
    twoFactorEnabled: { type: 'boolean' },
    createdAt: { type: 'string', format: 'date-time' },
    lastLoginAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const code = {
  type: 'object',
  additionalProperties: false,
  required: ['code'],
  properties: { code: { type: 'string', pattern: '^\\d{6}$', description: 'Current 6-digit code of the authenticator app' } },
} as const;

export const verify2fa = {
  type: 'object',
  additionalProperties: false,
  required: ['challengeToken', 'code'],
  properties: {
    challengeToken: { type: 'string', minLength: 1, maxLength: 2000 },
    code: { type: 'string', minLength: 6, maxLength: 20, description: '6-digit TOTP code or a recovery code (xxxxx-xxxxx)' },
  },
} as const;

export const totpSetup = {
  type: 'object',
  properties: {
    otpauthUri: { type: 'string', description: 'otpauth://totp/… for authenticator apps' },
    qrCodeDataUrl: { type: 'string', description: 'PNG data URL of the same URI as a QR code' },
  },
} as const;

export const recoveryCodes = {
  type: 'object',
  properties: { recoveryCodes: { type: 'array', items: { type: 'string' }, minItems: 10, maxItems: 10, description: 'Shown once; each works once' } },
} as const;

/**
 * A PublicKeyCredential as JSON (navigator.credentials.create/get → toJSON()). Its inner fields
 * are the browser's and grow with the WebAuthn spec, so only the outer body is strict here;
 * @simplewebauthn/server verifies the content.
 */
const credentialJson = {
  type: 'object',
  required: ['id', 'rawId', 'response', 'type'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 1024 },
    rawId: { type: 'string', minLength: 1, maxLength: 1024 },
    type: { const: 'public-key' },
    response: { type: 'object' },
    clientExtensionResults: { type: 'object' },
    authenticatorAttachment: { type: 'string' },
  },
} as const;

export const webauthnRegisterVerify = {
  type: 'object',
  additionalProperties: false,
  required: ['response'],
  properties: { response: credentialJson },
} as const;

export const webauthnLoginOptions = {
  type: 'object',
  additionalProperties: false,
  required: ['challengeToken'],
  properties: { challengeToken: { type: 'string', minLength: 1, maxLength: 2000 } },
} as const;

export const webauthnLoginVerify = {
  type: 'object',
  additionalProperties: false,
  required: ['challengeToken', 'response'],
  properties: { challengeToken: { type: 'string', minLength: 1, maxLength: 2000 }, response: credentialJson },
} as const;

export const passkey = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    credentialId: { type: 'string' },
    deviceType: { type: ['string', 'null'] },
    backedUp: { type: ['boolean', 'null'] },
    createdAt: { type: 'string', format: 'date-time' },
  },
} as const;

export const webauthnOptions = { type: 'object', description: 'PublicKeyCredentialCreationOptionsJSON / RequestOptionsJSON for the browser' } as const;

export interface RegisterBody {
  email: string;
  password: string;
  name: string;
  companyName: string;
  country?: string;
  plan?: 'free' | 'pro' | 'business';
}

export const forgotPassword = { type: 'object', additionalProperties: false, required: ['email'], properties: { email } } as const;

export const forgotPasswordAnswer = { type: 'object', required: ['message'], properties: { message: { type: 'string' } } } as const;

export const resetPassword = {
  type: 'object',
  additionalProperties: false,
  required: ['token', 'password'],
  properties: { token: { type: 'string', minLength: 1, maxLength: 200, description: 'The token of the reset link' }, password },
} as const;

export const changePassword = {
  type: 'object',
  additionalProperties: false,
  required: ['currentPassword', 'newPassword'],
  // The current password is not held to today's policy (an old one may be shorter), as at login.
  properties: { currentPassword: { type: 'string', minLength: 1, maxLength: 256 }, newPassword: password },
} as const;

export const reauthenticate = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  description: 'Exactly one of password, code and passkey',
  properties: {
    password: { type: 'string', minLength: 1, maxLength: 256 },
    code: { type: 'string', minLength: 6, maxLength: 20, description: '6-digit TOTP code or a recovery code (xxxxx-xxxxx)' },
    passkey: { ...credentialJson, description: 'An assertion for the options of POST /api/auth/webauthn/reauthenticate/options' },
  },
} as const;

export const sessionInfo = {
  type: 'object',
  required: ['id', 'createdAt', 'lastUsedAt', 'expiresAt', 'current'],
  properties: {
    id: { type: 'string', format: 'uuid', description: 'The session (refresh-token family) id, for DELETE /api/auth/sessions/{id}' },
    createdAt: { type: 'string', format: 'date-time', description: 'The login that started it' },
    lastUsedAt: { type: 'string', format: 'date-time', description: 'The latest refresh (or the login)' },
    expiresAt: { type: 'string', format: 'date-time' },
    current: { type: 'boolean', description: 'The session of the refresh cookie sent with this request' },
  },
} as const;
