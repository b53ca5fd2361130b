// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title Test ERC-1271 wallet
/// @notice The smallest stand-in for a contract account that signs (a Safe, a Coinbase Smart
/// Wallet, an ERC-4337 account): it has no key of its own, and `isValidSignature` answers the
/// ERC-1271 magic value when the signature over the hash recovers to its owner, as a one-owner
/// Safe does in spirit. The sign-in tests use it. Test-only: no domain separation, one owner.
contract TestErc1271Wallet {
    bytes4 internal constant MAGIC_VALUE = 0x1626ba7e;
    bytes4 internal constant INVALID = 0xffffffff;
    /// secp256k1n / 2: a larger s is the malleable twin of a valid signature (EIP-2)
    uint256 internal constant HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    address public immutable owner;

    constructor(address owner_) {
        owner = owner_;
    }

    /// ERC-1271: MAGIC_VALUE when `signature` (65 bytes, r s v) is the owner's over `hash`.
    function isValidSignature(bytes32 hash, bytes calldata signature) external view returns (bytes4) {
        if (signature.length != 65) return INVALID;
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        if (v < 27) v += 27;
        if (uint256(s) > HALF_N) return INVALID;
        address signer = ecrecover(hash, v, r, s);
        return signer != address(0) && signer == owner ? MAGIC_VALUE : INVALID;
    }
}

/// @title Test ERC-1271 wallet factory
/// @notice Deploys a TestErc1271Wallet with CREATE2 at an address known before it exists (a
/// counterfactual account): the address depends on the owner and a salt only. The ERC-6492 tests
/// wrap a signature with a call to `createWallet`. Calling it again for a deployed wallet returns it.
contract TestErc1271WalletFactory {
    event WalletCreated(address indexed wallet, address indexed owner);

    function createWallet(address owner, bytes32 salt) external returns (address wallet) {
        wallet = walletAddress(owner, salt);
        if (wallet.code.length > 0) return wallet;
        TestErc1271Wallet created = new TestErc1271Wallet{salt: _salt(owner, salt)}(owner);
        emit WalletCreated(address(created), owner);
        return address(created);
    }

    function walletAddress(address owner, bytes32 salt) public view returns (address) {
        bytes32 initCodeHash = keccak256(abi.encodePacked(type(TestErc1271Wallet).creationCode, abi.encode(owner)));
        bytes32 h = keccak256(abi.encodePacked(bytes1(0xff), address(this), _salt(owner, salt), initCodeHash));
        return address(uint160(uint256(h)));
    }

    function _salt(address owner, bytes32 salt) private pure returns (bytes32) {
        return keccak256(abi.encode(owner, salt));
    }
}
