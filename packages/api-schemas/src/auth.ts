import Type from 'typebox'

export const NonceResponse = Type.Object({
  nonce: Type.String({ description: 'Put this in the SIWE message; valid 5 minutes, once' }),
})

/** A contract account's signature (a passkey's, an ERC-6492 wrapper with its factory call) as hex: up to 8 KiB. */
export const MAX_SIGNATURE_HEX_CHARS = 2 + 2 * 8192

export const VerifyBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 8192, description: 'The EIP-4361 message as signed' }),
    signature: Type.String({
      pattern: '^0x(?:[0-9a-fA-F]{2})+$',
      maxLength: MAX_SIGNATURE_HEX_CHARS,
      description:
        "The 65-byte personal_sign signature of the message by its address's key; or, for a contract account, " +
        'the bytes its ERC-1271 isValidSignature accepts, ERC-6492-wrapped when the account is not deployed yet',
    }),
  },
  { additionalProperties: false },
)

export const VerifyResponse = Type.Object({
  token: Type.String({ description: 'JWT access token (HS256, 7 days, sub = user id)' }),
  address: Type.String({ description: 'The wallet address, EIP-55' }),
})
