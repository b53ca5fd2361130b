import Type from 'typebox'

export const NonceResponse = Type.Object({
  nonce: Type.String({ description: 'Put this in the SIWE message; valid 5 minutes, once' }),
})

export const VerifyBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 8192, description: 'The EIP-4361 message as signed' }),
    signature: Type.String({ pattern: '^0x[0-9a-fA-F]{130}$', description: '65-byte personal_sign signature' }),
  },
  { additionalProperties: false },
)

export const VerifyResponse = Type.Object({
  token: Type.String({ description: 'JWT access token (HS256, 7 days, sub = user id)' }),
  address: Type.String({ description: 'The wallet address, EIP-55' }),
})
